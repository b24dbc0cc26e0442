"""Build the coding set (sessions, turns with times, questions with gold turn keys) and write
it as Claude Code and Codex transcripts under a HOME.

    python -m bench.codeset.generate --home DIR   # writes the transcripts, prints a summary
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.codeset import facts as F
from bench.codeset import vocab
from bench.codeset.model import Session, Turn
from bench.codeset.paraphrase import PAIRS, shared_content
from bench.codeset.writers import write_session

START = datetime(2026, 3, 2, tzinfo=UTC)
SESSIONS_PER_PROJECT = 5
TURNS_PER_SESSION = 26
KINDS = ("identifier", "paraphrase", "decision", "project", "date")
PER_KIND = 24


@dataclass
class Question:
    qid: str
    kind: str
    text: str
    gold: tuple[str, ...]
    project: str

    @property
    def half(self) -> str:
        """``tuning`` or ``heldout``, fixed by the question id's hash."""
        digest = hashlib.sha256(self.qid.encode()).digest()
        return "heldout" if digest[0] % 2 else "tuning"


@dataclass
class CodeSet:
    sessions: list[Session]
    questions: list[Question]
    nonsense: list[str]
    offtopic: list[str]

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


_CHATTER_SLOTS = (
    "ok, run `{runner}` on the {mod} module again",
    "Running `{runner}`: {n} passed, 0 failed.",
    "The {table} query could use an index later, noting it.",
    "Reviewing the {mod} handler; nothing suspicious yet.",
    "can you add a log line around the {mod} retry loop?",
    "Added the log line; it prints the {table} id and the attempt number.",
)


def _chatter(rng: random.Random, index: int) -> str:
    if rng.random() < 0.5:
        return rng.choice(vocab.CHATTER)
    return rng.choice(_CHATTER_SLOTS).format(
        runner=vocab.STACKS[index % len(vocab.STACKS)][2],
        mod=rng.choice(vocab.MODULES),
        table=rng.choice(vocab.TABLES),
        n=rng.randint(12, 480),
    )


def _project_plan(
    project: str, index: int, rng: random.Random, fn_pairs: list[tuple[str, str]]
) -> tuple[list[F.Fact], list[F.Fact], list[str]]:
    """(facts placed freely, migrations (one per session at most), noise texts)."""
    facts, noise = F.project_facts(project, index, rng, fn_pairs)
    facts += F.config_facts(project, index, rng)
    facts.append(F.decision_fact(project, rng))
    if index < len(PAIRS):
        gold, question, _near = PAIRS[index]
        assert not shared_content(gold, question), (gold, question)
        facts.append(
            F.Fact("one more thing from last week's cleanup", gold, [("paraphrase", question)])
        )
    for k in (index + 7, index + 19):  # lexically close distractors of two other projects
        if k % len(vocab.PROJECTS) < len(PAIRS):
            noise.append(PAIRS[k % len(vocab.PROJECTS)][2])
    return facts, F.migration_facts(rng, 3), noise


def _session_days(rng: random.Random) -> list[int]:
    day = rng.randint(0, 90)
    days = []
    for _ in range(SESSIONS_PER_PROJECT):
        days.append(day)
        day += rng.randint(4, 30)
    return days


def _build_project(
    project: str, index: int, seed: int, fn_pairs: list[tuple[str, str]]
) -> tuple[list[Session], list[F.Fact], list[F.Fact]]:
    """The project's sessions with every fact placed (``Fact.key`` set to its gold turn)."""
    rng = random.Random(f"{seed}/{project}")
    facts, migrations, noise = _project_plan(project, index, rng, fn_pairs)
    rng.shuffle(facts)
    slots: list[list[F.Fact]] = [[] for _ in range(SESSIONS_PER_PROJECT)]
    for i, fact in enumerate(facts):
        slots[i % SESSIONS_PER_PROJECT].append(fact)
    for i, mig in zip(
        rng.sample(range(SESSIONS_PER_PROJECT), len(migrations)), migrations, strict=False
    ):
        slots[i].append(mig)
    noise_iter = itertools.cycle(noise)
    sessions = []
    for s, day in enumerate(_session_days(rng)):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        platform = "claude-code" if rng.random() < 0.6 else "codex-cli"
        at = START + timedelta(days=day, hours=rng.randint(7, 17), minutes=rng.randint(0, 59))
        items: list[F.Fact | str] = [*slots[s]]
        while len(items) * 2 < TURNS_PER_SESSION:
            items.append(next(noise_iter) if rng.random() < 0.3 else _chatter(rng, index))
        rng.shuffle(items)
        turns: list[Turn] = []
        for item in items:
            pair = (
                (item.user, item.answer)
                if isinstance(item, F.Fact)
                else (_chatter(rng, index), item)
            )
            for role, text in zip(("user", "assistant"), pair, strict=False):
                at += timedelta(seconds=rng.randint(20, 240))
                turns.append(Turn(f"{project}/{s}/{len(turns)}", role, text, at))
            if isinstance(item, F.Fact):
                item.key = turns[-1].key
                item.at = turns[-1].ts
        sessions.append(Session(project, platform, sid, f"/home/dev/src/{project}", turns))
    return sessions, facts, migrations


def _date_text(at: datetime, rng: random.Random) -> str:
    forms = (at.strftime("%Y-%m-%d"), at.strftime("%B %-d, %Y"), at.strftime("%-d %B %Y"))
    return rng.choice(forms)


def generate(seed: int = 24) -> CodeSet:
    """The whole set, the same for the same ``seed``."""
    rng = random.Random(seed)
    combos = [(v, n) for v in vocab.VERBS for n in vocab.NOUNS]
    rng.shuffle(combos)
    sessions: list[Session] = []
    by_kind: dict[str, list[Question]] = {k: [] for k in KINDS}
    migrations: list[tuple[str, F.Fact]] = []
    for i, project in enumerate(vocab.PROJECTS):
        made, facts, migs = _build_project(project, i, seed, combos[2 * i : 2 * i + 2])
        sessions += made
        migrations += [(project, m) for m in migs]
        for fact in facts:
            for kind, text in fact.questions:
                qid = f"{kind}-{len(by_kind[kind]):03d}"
                by_kind[kind].append(Question(qid, kind, text, (fact.key,), project))
    days = [m.at.date() for _p, m in migrations]
    for project, mig in migrations:
        if days.count(mig.at.date()) == 1:
            text = rng.choice(mig.date_question).format(date=_date_text(mig.at, rng))
            qid = f"date-{len(by_kind['date']):03d}"
            by_kind["date"].append(Question(qid, "date", text, (mig.key,), project))
    questions = []
    for kind in KINDS:
        pool = by_kind[kind]
        random.Random(f"{seed}/{kind}").shuffle(pool)
        questions += sorted(pool[:PER_KIND], key=lambda q: q.qid)
    return CodeSet(sessions, questions, _nonsense(rng), list(OFFTOPIC))


def _nonsense(rng: random.Random) -> list[str]:
    out = ["zxqv blorf quantum teapot"]
    while len(out) < 20:
        words = [
            "".join(
                rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou")
                for _ in range(rng.randint(2, 4))
            )
            for _ in range(rng.randint(2, 4))
        ]
        out.append(" ".join(words))
    return out


OFFTOPIC = (
    "what is a good hydration for a beginner sourdough loaf?",
    "who painted the girl with a pearl earring?",
    "how many moons does jupiter have?",
    "best hiking trails near lake como in october",
    "how do I get red wine out of a carpet?",
    "what time does the farmers market open on saturday?",
    "recommend a sci-fi novel about first contact",
    "how long should I boil an egg for a runny yolk?",
    "what's the capital of mongolia?",
    "lyrics of the song about yellow submarine",
    "how to repot a monstera without killing it",
    "cheapest way to fly from lisbon to oslo",
    "what is the offside rule in football?",
    "how many calories are in a banana?",
    "when is the next total solar eclipse in europe?",
    "tips for learning to juggle three balls",
    "how do penguins keep their eggs warm?",
    "what's the difference between a violin and a viola?",
    "birthday gift ideas for a seven year old",
    "how to knit a scarf for beginners",
)


def write(home: Path, codeset: CodeSet) -> dict[tuple[str, str], str]:
    """Write every session under ``home``; returns (session id, ISO time) → turn key."""
    keys: dict[tuple[str, str], str] = {}
    for session in codeset.sessions:
        write_session(home, session)
        for t in session.turns:
            keys[(session.sid, t.ts.isoformat())] = t.key
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    cs = generate(args.seed)
    if args.home:
        write(args.home, cs)
    kinds = {k: sum(q.kind == k for q in cs.questions) for k in KINDS}
    held = sum(q.half == "heldout" for q in cs.questions)
    print(
        f"{cs.turns} turns, {len(cs.sessions)} sessions, {len(vocab.PROJECTS)} projects;"
        f" questions {kinds} ({held} held out)"
    )


if __name__ == "__main__":
    main()
