"""The vocabulary of the coding set: projects, stacks, identifiers, errors, decisions, chatter.

Topics repeat across projects with different specifics, so a question that does not pin its
project or its identifier finds several plausible turns (the confusable distractors)."""

from __future__ import annotations

# fmt: off
PROJECTS = (
    "ledgerly", "pixelforge", "tidewater", "quillstack", "harborview", "nimbusdesk", "orchardly",
    "basaltcms", "copperline", "driftwood", "emberlog", "fernhill", "glacierpay", "hollowpine",
    "ironbark", "juniperdb", "kestrelops", "lanternhq", "marlinq", "nettlecast", "obsidianhr",
    "pebblecart", "quarrytrack", "ravenmail", "saffronpos", "thistledocs", "umberlab",
    "vantagebi", "willowcare", "xylemsync", "yarrowfit", "zephyrchat", "alderbook", "brackenai",
    "cinderboard", "dunlinmaps", "egretforms", "foxglovecrm", "gannetdrive", "heronstat",
)
STACKS = (  # (language, file pattern, test runner, db)
    ("python", "src/{mod}/{name}.py", "pytest", "postgres"),
    ("typescript", "src/{mod}/{name}.ts", "vitest", "postgres"),
    ("go", "internal/{mod}/{name}.go", "go test", "mysql"),
    ("rust", "crates/{mod}/src/{name}.rs", "cargo test", "sqlite"),
    ("ruby", "app/{mod}/{name}.rb", "rspec", "postgres"),
    ("kotlin", "app/src/main/kotlin/{mod}/{name}.kt", "gradle test", "mysql"),
)
MODULES = ("billing", "auth", "ingest", "reports", "sync", "search", "notify", "export", "api")
VERBS = ("parse", "load", "build", "resolve", "merge", "render", "validate", "flush", "compute")
NOUNS = (
    "invoice_lines", "session_token", "webhook_payload", "report_rows", "tax_rates",
    "sync_cursor", "user_profile", "export_batch", "retry_queue", "rate_limits",
)
TABLES = ("users", "orders", "invoices", "events", "accounts", "payments", "jobs", "documents")
COLUMNS = (
    "archived_at", "external_ref", "retry_count", "locale", "deleted_by", "currency_code",
    "last_seen_at", "priority", "checksum", "source_region", "trial_ends_at", "owner_team",
)
COLUMN_TYPES = ("timestamptz", "text", "integer", "varchar(8)", "bigint", "boolean")
ERRORS = (  # (class, message, a near-duplicate's message)
    ("KeyError", "'customer_id'", "'customer_uuid'"),
    ("TimeoutError", "upstream read timed out after 30s", "upstream connect timed out after 10s"),
    ("IntegrityError", "duplicate key value violates unique constraint \"orders_ref_key\"",
     "duplicate key value violates unique constraint \"orders_pkey\""),
    ("TypeError", "Cannot read properties of undefined (reading 'items')",
     "Cannot read properties of null (reading 'items')"),
    ("ConnectionRefusedError", "[Errno 111] Connection refused",
     "[Errno 110] Connection timed out"),
    ("ValueError", "invalid literal for int() with base 10: ''",
     "invalid literal for int() with base 16: 'zz'"),
    ("PermissionError", "[Errno 13] Permission denied: '/var/run/app.sock'",
     "[Errno 13] Permission denied: '/var/log/app.log'"),
    ("panic", "runtime error: index out of range [3] with length 3",
     "runtime error: invalid memory address or nil pointer dereference"),
)
CAUSES = (
    "a stale fixture that still used the old field name",
    "the worker reading the queue before the schema migration finished",
    "an env var that was unset in the staging container",
    "a race between two retries writing the same row",
    "the proxy closing idle keep-alive sockets early",
    "a nullable column coming back empty from the legacy import",
)
FIXES = (
    "guarding the lookup and adding a regression test",
    "ordering the startup so migrations run first",
    "reading the setting with a default and failing loudly at boot",
    "making the upsert idempotent on the request id",
    "lowering the client keep-alive below the proxy's",
    "coalescing the column to an empty string in the importer",
)
DECISIONS = (  # (area, option a, option b, reasons a-over-b, reasons b-over-a)
    ("the job queue", "Celery", "RQ",
     ("we need scheduled retries with backoff", "the team already runs Celery elsewhere"),
     ("RQ is far simpler to operate", "we only have a handful of background tasks")),
    ("the frontend state", "Zustand", "Redux",
     ("the store is tiny and Redux boilerplate slowed reviews",),
     ("the devtools time-travel helps with the checkout bugs",)),
    ("the HTTP framework", "FastAPI", "Flask",
     ("the typed request models catch payload errors early",),
     ("the existing plugins only exist for Flask",)),
    ("the primary database", "PostgreSQL", "MongoDB",
     ("the reports need joins and transactions",),
     ("the documents are schemaless and vary per tenant",)),
    ("the search backend", "Meilisearch", "Elasticsearch",
     ("it runs in 200 MB and typo tolerance works out of the box",),
     ("we need aggregations for the analytics pages",)),
    ("the auth tokens", "opaque session ids", "JWTs",
     ("revocation must be instant when an admin bans someone",),
     ("the edge functions verify them without a database call",)),
    ("the CI runner", "GitHub Actions", "Buildkite",
     ("the repo is small and hosted runners are free for us",),
     ("our integration tests need GPU agents we host ourselves",)),
    ("the logging format", "structured JSON logs", "plain text logs",
     ("Loki can index the fields without regexes",),
     ("humans tail them on the box and JSON is unreadable there",)),
)
DEPLOY_TARGETS = (
    "Fly.io in the ams region", "a Hetzner VM behind Caddy", "AWS ECS Fargate in eu-west-1",
    "Render with autoscaling off", "a k3s cluster on the office NUCs", "Cloud Run in us-central1",
    "Heroku on two standard dynos", "a DigitalOcean droplet with systemd units",
)
# fmt: on
CHATTER = (
    "ok, run the tests again",
    "thanks, that looks good",
    "can you show me the diff before committing?",
    "let's get rid of the unused imports while we're here",
    "commit that with a short message please",
    "hmm, the linter is complaining about line length",
    "All tests pass now. Want me to push the branch?",
    "Pushed. CI is running.",
    "the migration ran fine locally",
    "deploy when CI is green",
    "I reformatted the file; no behaviour change.",
    "can we get rid of the warning in the build output?",
    "Done. I also bumped the lockfile.",
    "what's left on the todo list?",
    "Remaining: update the docs and the changelog.",
    "let's take a break and pick this up tomorrow",
    "Rebased on main, no conflicts.",
    "the deploy is stuck on the health check again",
    "I'll look at the flaky test after lunch",
    "Ran the formatter and the type checker: clean.",
)
