"""Paraphrase facts: a turn and a question about it that share no content word (checked by
:func:`content_words`), with a lexically close distractor turn for other projects."""

from __future__ import annotations

import re

# (gold turn, question, distractor turn that shares the question's words but is not the answer)
# fmt: off
PAIRS = (
    ("Removed the Redis dependency: sessions now sit in signed cookies, one container fewer.",
     "how did we get rid of the separate in-memory store used for logins?",
     "We should get rid of the separate logging store at some point; logins are fine as is."),
    ("Swapped requests for httpx so outbound calls share one pooled client.",
     "which library replaced the old one for talking to external web APIs?",
     "The external web APIs page in the docs lists which library each service talks to."),
    ("Cron entries moved into a systemd timer; journald keeps their output now.",
     "where do the scheduled nightly chores run since we changed that?",
     "The nightly chores are scheduled by hand since we changed teams; nobody automated them."),
    ("Bumped Node from 18 to 22; the fetch polyfill could finally be deleted.",
     "what runtime upgrade let us drop a shim for making web calls?",
     "The runtime upgrade guide says to drop every shim before making the switch."),
    ("Images are resized by a Lambda on upload, thumbnails land in the CDN bucket.",
     "what happens to pictures right after someone sends one to us?",
     "Someone sends pictures to the support inbox; what happens after is up to them."),
    ("Pinned numpy below 2.0 because the wheel for scipy 1.10 breaks with it.",
     "why is the maths package held back to an older major release?",
     "The maths package release notes mention an older major version held back for months."),
    ("Sentry sampling cut to 5 percent; the monthly quota ran out on the 12th.",
     "why do we capture fewer crash reports than before?",
     "Before we capture crash reports we ask users for consent, fewer complain that way."),
    ("Feature flags come from Unleash; the env-var toggles were deleted.",
     "how are experimental switches turned on and off nowadays?",
     "Nowadays experimental switches in the editor are turned on in settings."),
    ("Passwords are hashed with argon2id, bcrypt rows rehash on next sign-in.",
     "what algorithm protects stored credentials since the security pass?",
     "The security pass reviewed the stored credentials algorithm list for the vendor audit."),
    ("Dropped the ORM for raw SQL in the ledger module: queries were 4x slower through it.",
     "why do the accounting reads bypass the mapping layer?",
     "The accounting reads are cached; the mapping layer is documented in the wiki."),
    ("CSV exports are streamed row by row, memory stays flat on 2 GB dumps.",
     "how do we keep big spreadsheet downloads from exhausting RAM?",
     "Big spreadsheet downloads are exhausting to review by hand, keep them small."),
    ("Dark mode follows prefers-color-scheme, the manual toggle was removed.",
     "how does the interface pick its light or night appearance?",
     "The interface appearance review is scheduled for the night release."),
    ("Timestamps are stored in UTC and converted in the browser with Intl.DateTimeFormat.",
     "where do we shift moments into each visitor's own clock zone?",
     "Each visitor's zone preference is shown on the profile page in local language."),
    ("Webhooks are verified with an HMAC over the raw body before json parsing.",
     "how do we know incoming callbacks really come from the provider?",
     "Incoming callbacks from the provider really slowed down this week."),
    ("Pagination switched from OFFSET to keyset on created_at,id: page 500 went from 9s to 40ms.",
     "what made browsing deep into long lists fast again?",
     "Browsing long lists is fast again after the office network was fixed."),
    ("The monorepo uses pnpm workspaces; yarn.lock was deleted.",
     "which package manager ties the sub-projects together?",
     "The sub-projects are tied together by a shared design doc, not a package manager."),
    ("Emails go through Postmark; SES bounced too much from the shared IP.",
     "which provider delivers our outgoing mail and why did we switch?",
     "Our outgoing mail provider question is on the agenda, why not switch later."),
    ("Secrets live in Doppler and are injected at boot, no more .env files on servers.",
     "how do credentials reach the machines when the app starts?",
     "The machines start slowly when the app loads credentials from the vault mirror."),
    ("Tests run against a throwaway Postgres in testcontainers instead of SQLite.",
     "what kind of database do the automated checks spin up?",
     "The automated checks spin up quickly; which kind of database is irrelevant there."),
    ("Retries use exponential backoff with jitter capped at 60 seconds.",
     "how long can we wait at most between repeated attempts?",
     "We wait at most a day between repeated attempts to reach the customer by phone."),
    ("The PDF invoices are rendered by WeasyPrint from the same HTML templates as the web view.",
     "how are printable bills produced?",
     "Printable bills are produced on request by the finance team."),
    ("Rate limiting is a token bucket in nginx: 20 burst, 5 per second per IP.",
     "how do we stop one client from flooding the service?",
     "One client kept flooding the service channel with questions on Friday."),
    ("Uploads above 100 MB go straight to S3 with presigned multipart URLs.",
     "how do huge attachments avoid passing through our own servers?",
     "Huge attachments in chat are passing through moderation on our own servers."),
    ("The search index is rebuilt nightly by a k8s CronJob, not on every write.",
     "when does the lookup catalogue get refreshed?",
     "The lookup catalogue for parts gets refreshed when the supplier mails a new one."),
    ("Translations are extracted with i18next-parser and edited in Crowdin.",
     "how does the wording for other languages get maintained?",
     "The translators updated their contact details; localized strings are next week."),
    ("Access logs drop query strings so tokens never hit disk.",
     "how do we avoid leaking secrets in request records?",
     "Request records are kept for avoiding disputes about leaking secrets."),
)
# fmt: on

STOP = frozenset(
    "a an the of to in on at for by with from and or but is are was were be been being do does "
    "did done we us our you your it its this that these those what which who whom how why when "
    "where there here so not no now one any some each all more most than then too very can could "
    "should would will shall may might must has have had use used using get got make made into "
    "over under since before after about up down out off again just only own same such as if i "
    "me my he she they them his her their".split()
)


def content_words(text: str) -> set[str]:
    """The content words of ``text``, crudely stemmed (the first five letters of longer words),
    so "sessions" and "session" count as the same word."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:5] if len(w) > 5 else w for w in words if w not in STOP and len(w) > 1}


def shared_content(a: str, b: str) -> set[str]:
    return content_words(a) & content_words(b)
