"""A session's extractive summary: what was asked, decided, touched and run, how it ended and
what was left open, from its turns and its actions (tool calls) alone.

:func:`digest` is pure (no database, no model), so it is the default summary without an LLM,
the fallback when the LLM gives no answer, and what ``forget`` writes again from the turns
left. Every part is optional: a part with nothing honest to say is left out, never shown
empty. :meth:`SessionDigest.render` is the text a person reads (one line per part, bounded);
:func:`search_terms` is the extra vocabulary the session is found by (not shown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from agents_memory.coldpath import session_text as st

ASK_CHARS: Final = 240
ALSO_ASKED: Final = 2
ALSO_CHARS: Final = 120
DECISIONS: Final = 3
DECISION_CHARS: Final = 170
FILES: Final = 6
COMMANDS: Final = 4
COMMAND_CHARS: Final = 70
OUTCOME_CHARS: Final = 300
OPEN_ENDS: Final = 2
OPEN_CHARS: Final = 160
SUMMARY_MAX_CHARS: Final = 1200
TERMS_MAX_CHARS: Final = 4000
_FAILED: Final = frozenset({"error"})
_CHANGING: Final = frozenset({"edit", "write"})


@dataclass(frozen=True, slots=True)
class DigestTurn:
    role: str
    text: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class DigestAction:
    kind: str
    targets: tuple[str, ...] = ()
    command: str | None = None
    outcome: str = "unknown"
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class SessionDigest:
    """The parts of a session's summary; any may be empty."""

    ask: str | None
    also_asked: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    more_files: int = 0
    commands: tuple[str, ...] = ()
    more_commands: int = 0
    outcome: str | None = None
    open_ends: tuple[str, ...] = ()
    files_from_text: bool = False
    turns: int = 0

    def lines(self) -> list[str]:
        """One line per part that has something to say, most important first."""
        out: list[str] = []
        if self.ask:
            out.append(f"Asked: {self.ask}")
        if self.also_asked:
            out.append("Then: " + "; ".join(self.also_asked))
        if self.decisions:
            out.append("Decided: " + "; ".join(self.decisions))
        if self.files:
            more = f" (+{self.more_files} more)" if self.more_files else ""
            label = "Files changed (per the text)" if self.files_from_text else "Files changed"
            out.append(f"{label}: " + ", ".join(self.files) + more)
        if self.commands:
            more = f" (+{self.more_commands} more)" if self.more_commands else ""
            out.append("Commands: " + ", ".join(self.commands) + more)
        if self.outcome:
            out.append(f"Outcome: {self.outcome}")
        if self.open_ends:
            out.append("Open: " + "; ".join(self.open_ends))
        if not out:
            turns = f"{self.turns} turn" + ("" if self.turns == 1 else "s")
            out.append(f"{turns}, none in words (markers, images or tool calls only)")
        return out

    def render(self, max_chars: int = SUMMARY_MAX_CHARS) -> str:
        """The summary as a person reads it, at most ``max_chars``: the least important parts
        (later asks, commands, files, decisions) go first when it is too long."""
        lines = self.lines()
        drop_order = ("Then: ", "Commands: ", "Files changed", "Decided: ", "Open: ")
        for prefix in drop_order:
            if len("\n".join(lines)) <= max_chars:
                break
            lines = [line for line in lines if not line.startswith(prefix)]
        text = "\n".join(lines)
        if len(text) <= max_chars:
            return text
        kept = [st.clip_line(line, max(40, max_chars // max(1, len(lines)) - 1)) for line in lines]
        return st.clip_line("\n".join(kept), max_chars)

    @property
    def title(self) -> str:
        """One short line naming the session (its ask, else its outcome)."""
        return st.clip_line(self.ask or self.outcome or "(no request recorded)", 100)


def digest(turns: Sequence[DigestTurn], actions: Sequence[DigestAction] = ()) -> SessionDigest:
    """The extractive summary of a session's ``turns`` (oldest first) and ``actions``."""
    asks = _asks(turns)
    files, more_files, from_text = _files(turns, actions)
    commands, more_commands = _commands(turns, actions)
    return SessionDigest(
        ask=asks[0] if asks else None,
        also_asked=tuple(st.clip_line(a, ALSO_CHARS) for a in asks[1 : 1 + ALSO_ASKED]),
        decisions=_decisions(turns, asks),
        files=files,
        more_files=more_files,
        commands=commands,
        more_commands=more_commands,
        outcome=_outcome(turns),
        open_ends=_open_ends(turns, actions),
        files_from_text=from_text,
        turns=len(turns),
    )


def _asks(turns: Sequence[DigestTurn]) -> list[str]:
    """The user's real requests, in order, each once; the first non-empty user turn when
    none is (a session of only "hello" was asked "hello")."""
    found: list[str] = []
    fallback: str | None = None
    for turn in turns:
        if turn.role != "user":
            continue
        line = st.request_line(turn.text, ASK_CHARS)
        if fallback is None and line:
            fallback = line
        if st.is_noise_request(turn.text) or not line or line in found:
            continue
        found.append(line)
    return found or ([fallback] if fallback else [])


def _decisions(turns: Sequence[DigestTurn], asks: Sequence[str]) -> tuple[str, ...]:
    """Sentences that state a decision (not a question, not part of a request)."""
    found: list[str] = []
    for turn in turns:
        for sentence in st.sentences(turn.text):
            if not st.is_decision(sentence) or any(sentence[:40] in ask for ask in asks):
                continue
            line = st.clip_line(sentence.removeprefix("Decision: "), DECISION_CHARS)
            if line not in found:
                found.append(line)
    return tuple(found[-DECISIONS:])


def _files(
    turns: Sequence[DigestTurn], actions: Sequence[DigestAction]
) -> tuple[tuple[str, ...], int, bool]:
    """(files changed, how many more, whether they come from the text): from the edits and
    writes that did not fail, most touched first; from the assistant's words when the client
    recorded no tool calls."""
    touched: Counter[str] = Counter()
    for action in actions:
        if action.kind in _CHANGING and action.outcome not in ("error", "interrupted"):
            touched.update(t for t in action.targets if t)
    from_text = False
    if not actions:
        from_text = True
        for turn in turns:
            if turn.role == "assistant":
                touched.update(dict.fromkeys(st.changed_paths(turn.text), 1))
    ranked = [path for path, _ in touched.most_common()]
    return tuple(ranked[:FILES]), max(0, len(ranked) - FILES), from_text and bool(ranked)


def _commands(
    turns: Sequence[DigestTurn], actions: Sequence[DigestAction]
) -> tuple[tuple[str, ...], int]:
    """Distinct shell commands, each with "(failed)" when its last run failed; from the text
    ("ran `…`") when the client recorded no tool calls."""
    last: dict[str, bool] = {}
    for action in actions:
        if action.kind != "shell" or not action.command:
            continue
        first = action.command.strip().splitlines()[0] if action.command.strip() else ""
        if not first:
            continue
        failed = action.outcome in _FAILED or (action.exit_code not in (None, 0))
        last.pop(first, None)
        last[first] = failed
    if not actions:
        for turn in turns:
            for command in st.ran_commands(turn.text):
                last.setdefault(command, False)
    shown = [
        f"`{st.clip_line(cmd, COMMAND_CHARS)}`" + (" (failed)" if failed else "")
        for cmd, failed in last.items()
    ]
    return tuple(shown[-COMMANDS:]), max(0, len(shown) - COMMANDS)


def _outcome(turns: Sequence[DigestTurn]) -> str | None:
    """The state the session reached: the last assistant turn's first sentences that say
    something (not "Let me check…")."""
    for turn in reversed(turns):
        if turn.role != "assistant":
            continue
        said = [s for s in st.sentences(turn.text) if not st.is_progress(s)]
        if not said:
            continue
        said = [s for s in said if not st.is_decision(s)] or said  # decisions have their line
        text = ""
        for sentence in said:
            if text and len(text) + len(sentence) > OUTCOME_CHARS:
                break
            text = f"{text} {sentence}".strip()
        return st.clip_line(text, OUTCOME_CHARS)
    return None


def _open_ends(turns: Sequence[DigestTurn], actions: Sequence[DigestAction]) -> tuple[str, ...]:
    """A last request left unanswered, a last command that failed, and what the last
    assistant turns say is left (to do, next, "want me to…")."""
    found: list[str] = []
    last = next((t for t in reversed(turns) if st.clean(t.text)), None)
    if last is not None and last.role == "user" and not st.is_noise_request(last.text):
        found.append("unanswered: " + st.request_line(last.text, OPEN_CHARS))
    shells = [a for a in actions if a.kind == "shell" and a.command and a.command.strip()]
    if shells and (shells[-1].outcome in _FAILED or shells[-1].exit_code not in (None, 0)):
        first = (shells[-1].command or "").strip().splitlines()[0]
        found.append(f"the last command failed: `{st.clip_line(first, COMMAND_CHARS)}`")
    replies = [t for t in turns if t.role == "assistant"][-1:]
    for turn in replies:
        for sentence in st.sentences(turn.text):
            if st.is_open_end(sentence) and len(found) < OPEN_ENDS:
                line = st.clip_line(sentence, OPEN_CHARS)
                if line not in found:
                    found.append(line)
    return tuple(found[:OPEN_ENDS])


def search_terms(turns: Sequence[DigestTurn], actions: Sequence[DigestAction], shown: str) -> str:
    """The session's words a search may find it by that its summary does not show: its
    content words (most frequent first), the targets and commands of its actions; bounded."""
    counts: Counter[str] = Counter()
    for turn in turns:
        counts.update(st.content_tokens(st.clean(turn.text)))
    for action in actions:
        counts.update(st.content_tokens(" ".join(action.targets) + " " + (action.command or "")))
    already = set(st.content_tokens(shown))
    out: list[str] = []
    used = 0
    for word, _ in counts.most_common():
        if word in already:
            continue
        if used + len(word) + 1 > TERMS_MAX_CHARS:
            break
        out.append(word)
        used += len(word) + 1
    return " ".join(out)
