"""The per-prompt recall evaluation set (issue 29) on the coding set's pool: prompts a developer
types at the start of a new session, in one of the 40 projects (its directory is the session's
``cwd``), of two sorts.

* **Related**: a past turn is what the prompt needs. Made from the set's gold turns (an error
  code seen before, a decision and its reason, where a function lives, how the project is run,
  released and configured, which migration added a column) in words a developer would type —
  often without naming the project, which the prompt's directory gives — plus the set's
  paraphrase questions (no word in common with their turn).
* **Unrelated**: nothing in memory matters: acknowledgements and commands in several
  languages, chit-chat, questions on other topics, general programming questions and new work.

Each prompt's half (tuning or held-out) is fixed by its id's hash, as the set's questions are.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from bench.codeset.generate import CodeSet

_ERROR = re.compile(
    r"^The (?P<cls>\w+): (?P<msg>.+?) in `(?P<path>[^`]+)` \(error (?P<code>E\d+)\)"
)
_DECISION = re.compile(r"^Decision: we went with (?P<a>.+?) over (?P<b>.+?) for (?P<area>.+?) bec")
_WHERE = re.compile(r"^`(?P<fn>\w+)` lives in `(?P<path>[^`]+)`")
_MIGRATION = re.compile(r"^Migration \w+ is in: it adds `(?P<col>\w+)` \(\w+\) to `(?P<table>\w+)`")
_FIXED = (
    (re.compile(r"^Set the \w+ pool to"), (
        "what pool size did we settle on for the database?",
        "the workers are waiting on db connections again, what did we set the pool to?",
    )),
    (re.compile(r"^The upstream request timeout is now"), (
        "what's our upstream request timeout set to?",
        "upstream calls are timing out, what timeout did we configure?",
    )),
    (re.compile(r"^Deploys go to"), (
        "how do I cut a release of this?",
        "where does this get deployed?",
    )),
    (re.compile(r"^`[^`]+` now skips the slow suite"), (
        "how do I run the slow tests here?",
        "the test run skips some suites, how do I run everything?",
    )),
)  # fmt: skip

UNRELATED_ACKS = (
    "ok", "yes", "continue", "go ahead", "thanks!", "lgtm", "ok, commit this", "sounds good",
    "/clear", "/compact keep the failing test in mind", "/model", "/review", "2", "👍",
    "oui, vas-y", "merci", "weiter", "danke!", "sí, continúa", "gracias", "да, продолжай",
    "спасибо", "继续", "好的", "はい、続けて", "네", "ok merci", "yes please", "try again", "k",
)  # fmt: skip
UNRELATED_CHAT = (
    "good morning! how are you today?", "tell me a joke about programmers",
    "what should I have for lunch?", "I'm tired today, let's keep it short",
    "do you like working on weekends?", "what's your favourite programming language and why?",
    "can you recommend a podcast for my commute?", "happy friday!",
    "I'll be away next week, nothing urgent", "how was your day?",
    "what's a good name for a cat?", "write a haiku about autumn",
)  # fmt: skip
UNRELATED_TOPICS = (
    "what is a good hydration for a beginner sourdough loaf?",
    "who painted the girl with a pearl earring?", "how many moons does jupiter have?",
    "best hiking trails near lake como in october", "how do I get red wine out of a carpet?",
    "recommend a sci-fi novel about first contact", "what's the capital of mongolia?",
    "how to repot a monstera without killing it", "cheapest way to fly from lisbon to oslo",
    "what is the offside rule in football?", "when is the next total solar eclipse in europe?",
    "tips for learning to juggle three balls", "how do penguins keep their eggs warm?",
    "birthday gift ideas for a seven year old", "how to knit a scarf for beginners",
    "explain the rules of cricket simply", "how long does it take to learn piano?",
    "what's the difference between a crocodile and an alligator?",
    "translate 'where is the train station' into german", "summarise the plot of hamlet",
)  # fmt: skip
UNRELATED_CODING = (
    "how do I reverse a list in python?",
    "what's the difference between git merge and rebase?",
    "explain big-O notation with an example",
    "write a regex that matches an email address",
    "how does TCP's three-way handshake work?",
    "what is a closure in javascript?",
    "how do I center a div with flexbox?",
    "what's the time complexity of quicksort?",
    "explain the CAP theorem",
    "how do I undo the last git commit but keep the changes?",
    "what's the difference between a process and a thread?",
    "how does garbage collection work in java?",
    "write a bash one-liner to count lines in all .py files",
    "what is dependency injection?",
    "how do I read a csv file with pandas?",
    "explain async/await in rust",
    "what does the SOLID acronym stand for?",
    "how do I make an http request in go?",
    "what's the difference between let and const?",
    "how do hash maps handle collisions?",
    "write a function that checks whether a string is a palindrome",
    "what's a good way to learn haskell?",
    "how do I set up a python virtual environment?",
    "explain how https certificates are validated",
    "what is tail call optimisation?",
    'convert this json to yaml: {"a": 1, "b": [2, 3]}',
    "what is a monad, simply?",
    "how do I find the largest files on my disk on linux?",
    "explain the difference between unit and integration tests",
    "what does `chmod 755` mean?",
    "add a dark mode toggle to the settings page",
    "write a dockerfile for a small node app",
    "scaffold a new vue component for a date picker",
    "generate a README for a cli tool that resizes images",
    "write a github actions workflow that runs eslint",
    "create a makefile with build and clean targets",
    "draft a commit message for fixing a typo in the docs",
    "write a unit test for a fizzbuzz function",
    "implement binary search in typescript",
    "write a sql query that finds duplicate emails in a users table",
)


@dataclass(frozen=True, slots=True)
class Prompt:
    pid: str
    kind: str
    text: str
    project: str
    gold: tuple[str, ...]
    """The turn keys the prompt needs; empty for an unrelated prompt."""

    @property
    def related(self) -> bool:
        return bool(self.gold)

    @property
    def half(self) -> str:
        digest = hashlib.sha256(f"prompt/{self.pid}".encode()).digest()
        return "heldout" if digest[0] % 2 else "tuning"


def _related_for(text: str, rng: random.Random) -> tuple[str, str] | None:
    """(kind, prompt) for a gold-like assistant turn, or ``None``."""
    if m := _ERROR.match(text):
        return "error", rng.choice((
            f"getting {m['code']} again, what was behind it last time?",
            f"{m['code']} is back in the logs, how did we fix it before?",
            f"seeing {m['cls']}: {m['msg']} again, any idea?",
        ))  # fmt: skip
    if m := _DECISION.match(text):
        return "decision", rng.choice((
            f"should we switch {m['area']} to {m['b']}?",
            f"remind me why we picked {m['a']} for {m['area']}",
            f"thinking of replacing {m['a']} with {m['b']}, did we discuss this?",
        ))  # fmt: skip
    if m := _WHERE.match(text):
        return "identifier", rng.choice((
            f"I want to refactor {m['fn']}, where is it?",
            f"{m['fn']} is behaving oddly, what does it do?",
        ))  # fmt: skip
    if m := _MIGRATION.match(text):
        return "migration", rng.choice((
            f"did we already add {m['col']} to {m['table']}?",
            f"which migration added the {m['col']} column to {m['table']}?",
        ))  # fmt: skip
    for pattern, asks in _FIXED:
        if pattern.match(text):
            return "howto", rng.choice(asks)
    return None


def prompts(cs: CodeSet, seed: int = 29, per_project: int = 6) -> list[Prompt]:
    """The related prompts (``per_project`` of each project's gold turns, then the set's
    paraphrase questions) and the unrelated ones, each unrelated prompt in a project too."""
    rng = random.Random(seed)
    out: list[Prompt] = []
    by_project: dict[str, list[tuple[str, str, str]]] = {}
    for session in cs.sessions:
        for turn in session.turns:
            made = _related_for(turn.text, rng) if turn.role == "assistant" else None
            if made:
                by_project.setdefault(session.project, []).append((*made, turn.key))
    for project, items in sorted(by_project.items()):
        for kind, text, key in rng.sample(items, min(per_project, len(items))):
            out.append(Prompt(f"{kind}/{key}", kind, text, project, (key,)))
    for q in cs.questions:
        if q.kind == "paraphrase":
            out.append(Prompt(f"paraphrase/{q.qid}", "paraphrase", q.text, q.project, q.gold))
    projects = sorted(by_project)
    groups = (
        ("ack", UNRELATED_ACKS),
        ("chat", UNRELATED_CHAT),
        ("topic", UNRELATED_TOPICS),
        ("coding", UNRELATED_CODING),
    )
    for kind, texts in groups:
        for i, text in enumerate(texts):
            out.append(Prompt(f"{kind}/{i}", kind, text, rng.choice(projects), ()))
    return out
