"""Each project's facts: the turns that answer questions (gold), the distractor turns that look
like them, and the questions, by kind."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from bench.codeset import vocab


@dataclass
class Fact:
    """A user turn and the assistant turn that holds the fact (the gold), placed in a session
    of its project; ``questions`` are (kind, text) asked about it."""

    user: str
    answer: str
    questions: list[tuple[str, str]] = field(default_factory=list)
    date_question: tuple[str, ...] = ()
    """Date-anchored question templates (``{date}`` filled once the turn has a time)."""
    key: str = ""
    at: datetime | None = None


def _ident(verb: str, noun: str, lang: str) -> str:
    if lang in ("python", "ruby", "rust"):
        return f"{verb}_{noun}"
    head, *rest = noun.split("_")
    return verb + head.capitalize() + "".join(w.capitalize() for w in rest)


_PURPOSE = {
    "parse": "turns the raw {w} into typed records",
    "load": "reads the {w} from the database with one query",
    "build": "assembles the {w} for the API response",
    "resolve": "picks the right {w} when two sources disagree",
    "merge": "combines duplicate {w} keeping the newest",
    "render": "formats the {w} for the email template",
    "validate": "rejects malformed {w} before they are stored",
    "flush": "writes the buffered {w} every few seconds",
    "compute": "derives the {w} totals for the dashboard",
}


def project_facts(
    project: str, index: int, rng: random.Random, fn_pairs: list[tuple[str, str]]
) -> tuple[list[Fact], list[str]]:
    """The facts of ``project`` and its own distractor turns (near-duplicate errors, chatter
    mentioning its identifiers)."""
    lang, pattern, _runner, _db = vocab.STACKS[index % len(vocab.STACKS)]
    facts: list[Fact] = []
    noise: list[str] = []
    for verb, noun in fn_pairs:
        mod = rng.choice(vocab.MODULES)
        fn = _ident(verb, noun, lang)
        path = pattern.format(mod=mod, name=noun)
        words = noun.replace("_", " ")
        asks = (
            f"where is `{fn}` defined?",
            f"which file holds {fn}?",
            f"what does {fn} do and where does it live?",
        )
        facts.append(
            Fact(
                f"I need to change how the {words} are handled, where is that code?",
                f"`{fn}` lives in `{path}`: it {_PURPOSE[verb].format(w=words)}."
                f" The {mod} handler calls it once per request.",
                [("identifier", rng.choice(asks))],
            )
        )
        noise.append(f"Let me look at how `{fn}` is called before changing it.")
        noise.append(f"Edited `{path}`: renamed a local variable, no behaviour change.")
    for j in rng.sample(range(len(vocab.ERRORS)), 2):
        cls, msg, near = vocab.ERRORS[j]
        code = f"E{rng.randint(1000, 9999)}"
        mod = rng.choice(vocab.MODULES)
        path = pattern.format(mod=mod, name=rng.choice(vocab.NOUNS))
        cause, fix = rng.choice(vocab.CAUSES), rng.choice(vocab.FIXES)
        asks = (f"what was behind error {code}?", f"what caused {code} and how was it fixed?")
        facts.append(
            Fact(
                f"the {mod} endpoint fails with {code}, here is the trace: {cls}: {msg}",
                f"The {cls}: {msg} in `{path}` (error {code}) came from {cause}."
                f" Fixed it by {fix}.",
                [("identifier", rng.choice(asks))],
            )
        )
        noise.append(f"Seeing {cls}: {near} in `{path}` again, probably unrelated, ignoring it.")
    return facts, noise


def migration_facts(rng: random.Random, n: int) -> list[Fact]:
    """``n`` migrations of one project: each adds a column to a table (the date-anchored facts)."""
    out = []
    for _ in range(n):
        table, column = rng.choice(vocab.TABLES), rng.choice(vocab.COLUMNS)
        kind = rng.choice(vocab.COLUMN_TYPES)
        num = rng.randint(10, 99)
        out.append(
            Fact(
                f"write the migration for the new {table} field we discussed",
                f"Migration 00{num}_add_{column}_to_{table} is in: it adds `{column}` ({kind}) to"
                f" `{table}` and backfills it in batches of 5000.",
                date_question=(
                    "which column did the migration on {date} add?",
                    "what did the {table} migration we ran on {date} add?".replace(
                        "{table}", table
                    ),
                    "on {date} we added a column to " + table + ", which one?",
                ),
            )
        )
    return out


def config_facts(project: str, index: int, rng: random.Random) -> list[Fact]:
    """Settings every project has with its own values (the project-named facts)."""
    _lang, _pattern, runner, db = vocab.STACKS[index % len(vocab.STACKS)]
    pool, over = rng.choice((5, 8, 10, 12, 16, 20, 25, 30)), rng.choice((2, 4, 5, 10))
    timeout, gateway = rng.choice((5, 8, 10, 15, 20, 30, 45)), rng.choice((30, 60, 90, 120))
    target = rng.choice(vocab.DEPLOY_TARGETS)
    return [
        Fact(
            "the workers keep waiting for database connections",
            f"Set the {db} pool to {pool} connections with max overflow {over}; the workers"
            f" were starving at the default.",
            [
                (
                    "project",
                    rng.choice(
                        (
                            f"what connection pool size did we settle on for {project}?",
                            f"in {project}, how big is the database pool?",
                        )
                    ),
                )
            ],
        ),
        Fact(
            "requests to the upstream hang sometimes",
            f"The upstream request timeout is now {timeout}s; the gateway's own limit is"
            f" {gateway}s, so we fail before it does.",
            [("project", f"in {project}, what's the upstream request timeout?")],
        ),
        Fact(
            "remind me how releases work here",
            f"Deploys go to {target}; `make release` tags the commit and pushes the image.",
            [
                (
                    "project",
                    rng.choice(
                        (f"where does {project} get deployed?", f"how is {project} released?")
                    ),
                )
            ],
        ),
        Fact(
            "the test run takes forever",
            f"`{runner}` now skips the slow suite unless SLOW=1 is set; the default run takes"
            f" about {rng.randint(20, 90)} seconds.",
            [("project", f"how do we run the slow tests in {project}?")],
        ),
    ]


def decision_fact(project: str, rng: random.Random) -> Fact:
    """A decision between two options with its reason (either way round)."""
    area, a, b, why_a, why_b = rng.choice(vocab.DECISIONS)
    if rng.random() < 0.5:
        a, b, why = b, a, why_b
    else:
        why = why_a
    reason = rng.choice(why)
    asks = (
        f"why did {project} go with {a} rather than {b}?",
        f"what was the reasoning for choosing {a} for {area} in {project}?",
        f"in {project}, why {a} instead of {b}?",
    )
    return Fact(
        f"should we use {a} or {b} for {area}?",
        f"Decision: we went with {a} over {b} for {area} because {reason}.",
        [("decision", rng.choice(asks))],
    )
