"""LoCoMo as the benches need it: turns in the §4.2 text form, questions and their gold ids.

The data file is CC BY-NC: it is read from the path given on the command line and never copied
into the repository. Nothing here writes anywhere.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

EXPECTED_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)$")


@dataclass(frozen=True, slots=True)
class Turn:
    sample_id: str
    session: int
    index: int
    """Position within the session (0-based)."""
    dia_id: str
    speaker: str
    role: str
    """``user`` for speaker_a, ``assistant`` for speaker_b (a convention, §4.2)."""
    text: str
    """``"<speaker>: <text>"`` plus ``" [image: <caption>]"`` when there is a caption."""
    ts: datetime


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    sample_id: str
    category: int
    question: str
    gold: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def now(self) -> datetime:
        """Last session start + 1 day (§4.3)."""
        starts = {t.session: t.ts for t in self.turns if t.index == 0}
        return starts[max(starts)] + timedelta(days=1)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _parse_date(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for sample in data:
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        sessions = sorted(
            int(m.group(1))
            for key, value in conv.items()
            if (m := _SESSION.match(key)) and isinstance(value, list)
        )
        turns: list[Turn] = []
        for n in sessions:
            start = _parse_date(conv[f"session_{n}_date_time"])
            for i, raw in enumerate(conv[f"session_{n}"]):
                text = f"{raw['speaker']}: {raw['text']}"
                if raw.get("blip_caption"):
                    text += f" [image: {raw['blip_caption']}]"
                turns.append(
                    Turn(
                        sample_id=sample["sample_id"],
                        session=n,
                        index=i,
                        dia_id=raw["dia_id"],
                        speaker=raw["speaker"],
                        role="user" if raw["speaker"] == a else "assistant",
                        text=text,
                        ts=start + timedelta(seconds=30 * i),
                    )
                )
        known = {t.dia_id for t in turns}
        questions = []
        for qi, qa in enumerate(sample["qa"]):
            gold: list[str] = []
            for ev in qa.get("evidence", []):
                for m in _EVIDENCE.finditer(str(ev)):
                    dia = f"D{int(m.group(1))}:{int(m.group(2))}"
                    if dia in known and dia not in gold:
                        gold.append(dia)
            if gold:
                questions.append(
                    Question(
                        qid=f"{sample['sample_id']}#{qi}",
                        sample_id=sample["sample_id"],
                        category=int(qa["category"]),
                        question=str(qa["question"]),
                        gold=tuple(gold),
                    )
                )
        out.append(Conversation(sample["sample_id"], a, b, tuple(turns), tuple(questions)))
    return out
