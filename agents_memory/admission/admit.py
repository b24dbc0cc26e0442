"""Admission: the one place that decides what may be stored as memory text, and in what form.

Every write of memory text asks an :class:`Admission` (built once per entry point from the
settings by :func:`create_admission`) about its candidate, through the method for its kind, and
gets back either :class:`Admitted` (the text and raw text ready to store, plus the project's git
hints) or :class:`Refused` (a reason, and a sentence a person or a model can act on). The store
takes memory text only as :data:`~agents_memory.store.memories.AdmittedText`, which only this
module makes, so a write path that skips admission does not type-check.

The steps, in order (the first refusal wins):

1. **empty**: nothing but whitespace came in (once what PostgreSQL text cannot hold is gone:
   NUL characters, lone surrogates).
2. **too-long**: a deliberate save over :data:`MAX_SAVED_CHARS` (the caller asks for a summary).
3. **echo**: the text (or the raw text) carries the session-start brief's marker.
4. **forgotten**: the candidate's stable id (``key``) has a tombstone: the owner forgot that
   turn (``mcp-agents-memory forget``), or it was written while capture was paused. The
   caller passes the tombstoned keys among its batch (``forgotten``; capture asks the store
   once per batch, :func:`agents_memory.store.capture.tombstones.forgotten_among`). The check is by
   key alone, not key and text hash: a client that rewrites a message under the same id
   (Gemini CLI) is still writing the turn the owner forgot, and the owner expects it to stay
   gone. The tombstone's hash is kept for rows without a key (it never holds the text).
5. **private-only**: once the ``<private>`` spans are removed, nothing is left.
6. **excluded**: the project (the directory and its git root) matches ``CAPTURE_EXCLUDE``.
   **opted-out**: the project committed the opt-out marker ``.agents-memory/no-memory``
   (:func:`agents_memory.admission.project_switch.memory_off`); applied where exclusion is.
7. Redaction (when ``REDACT_ENABLED``) of the text and the raw text; then it is admitted.

What applies to which candidate, and why:

=====================  =====  ========  ================  ====  ============  ==========
candidate              echo   private   excluded          size  redaction     whitespace
=====================  =====  ========  ================  ====  ============  ==========
``captured_turn``      yes    yes       the turn's cwd    none  if enabled    kept
``saved_message``      yes    yes       the server's cwd  cap   if enabled    trimmed
``pinned_fact``        yes    yes       the server's cwd  cap   if enabled    trimmed
``edited_text``        yes    yes       not applied       cap   if enabled    trimmed
``imported``           yes    yes       the turn's cwd    none  if enabled    kept
``captured_action``    no     yes       the call's cwd    none  if enabled    trimmed
``imported_action``    no     yes       its turn's        none  if enabled    trimmed
=====================  =====  ========  ================  ====  ============  ==========

* Deliberate saves (``save_message``, ``manage_knowledge``) get the same private-span removal
  and redaction as capture: the user's ``<private>`` and the "secrets never enter the pool"
  promise hold whoever writes, an agent saving a fact on purpose included.
* A brief echo is refused everywhere: the brief is memory's own output, and storing it again
  would feed memory back into itself (capture has always dropped it; ``save_message`` and
  ``manage_knowledge`` now refuse it too).
* ``CAPTURE_EXCLUDE`` applies wherever the text comes from a project: the turn's directory, or
  the MCP server's working directory for ``save_message`` and ``manage_knowledge add``. An
  update of a stored memory and a sub-profile note (``edited_text``) have no project of their
  own: the row is already in the pool (refusing an edit would only keep the old text) and the
  profile is the user's, not a project's.
* An imported turn (``mcp-agents-memory import`` of an export bundle) is admitted like a
  captured one, with the bundle's git root and remote standing in for a lookup (its directory
  may not exist on this machine): a bundle cannot carry in what capture would have kept out,
  and a tombstone will refuse a forgotten turn by its key.
* A captured action (a tool call: its targets, command line and result excerpt) is admitted
  text by text, each with the turns' private-span removal and redaction: a secret in a command
  line or an error message is masked like one in a turn. Its size is bounded by the adapter
  (the excerpt cap), and a brief echo cannot be one. An imported action is admitted the same
  way; it comes in only with a turn of its session that this pool holds (the import refuses
  it otherwise), so the turns' exclusion keeps an excluded project's actions out too.
* Size: a captured turn is never refused for its length (a long tool output is a real turn; a
  row PostgreSQL cannot index is skipped and logged by the pipeline); deliberate saves stop at
  :data:`MAX_SAVED_CHARS`, counted before anything is removed.

Text already stored is admitted again by :func:`rescrubbed` when ``doctor --secrets --fix``
rewrites it: both opinions on secrets applied (:mod:`agents_memory.admission.scrub`), whatever
``REDACT_ENABLED`` says (the user asked for exactly that).

Adding a kind of candidate (an imported bundle, say) is one method that builds a
:class:`Candidate` with its rules and hands it to :meth:`Admission.admit`.

The package's ``__init__`` does not import this module: hooks import
:mod:`agents_memory.admission.echo` on their time budget and must not pay for the redaction
rules.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from agents_memory.adapters.base import Action, Turn
from agents_memory.admission.filters import ExcludeMatcher, is_brief_echo, strip_private
from agents_memory.admission.project_switch import memory_off
from agents_memory.admission.redact import redact
from agents_memory.admission.scrub import scrub
from agents_memory.config import Settings
from agents_memory.gitinfo import NO_GIT, GitInfo, git_info
from agents_memory.store.memories import AdmittedText

MAX_SAVED_CHARS: Final = 200_000
"""The longest text an agent may save on purpose (``save_message``, ``manage_knowledge``)."""

Reason = Literal["empty", "too-long", "echo", "forgotten", "private-only", "excluded", "opted-out"]
OPTED_OUT = "this project opted out of memory (its .agents-memory/no-memory marker)"

NOTHING_FORGOTTEN: Final[frozenset[str]] = frozenset()


@dataclass(frozen=True, slots=True)
class Refused:
    """A candidate that may not be stored, why (``reason``) and in words (``detail``)."""

    reason: Reason
    detail: str


@dataclass(frozen=True, slots=True)
class Admitted:
    """Text ready to store: private spans gone, secrets redacted (when enabled)."""

    text: AdmittedText
    raw: AdmittedText | None
    """The raw text (the client's envelope kept), admitted the same way; ``None`` if none."""
    git: GitInfo
    """The git root and remote of the candidate's directory (:data:`NO_GIT` without one)."""


@dataclass(frozen=True, slots=True)
class AdmittedAction:
    """A tool call's texts ready to store: private spans gone, secrets redacted (when
    enabled), each target, the command line and the excerpt on its own."""

    targets: tuple[AdmittedText, ...]
    command: AdmittedText | None
    excerpt: AdmittedText | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """Text that wants to be stored, and the rules its kind brings."""

    text: str
    raw: str | None = None
    cwd: str | None = None
    """The project directory the text comes from; exclusion is checked only when set."""
    key: str | None = None
    """The stable id (``external_uuid``) the tombstone check matches."""
    forgotten: Container[str] = NOTHING_FORGOTTEN
    """The tombstoned keys the caller looked up for its batch."""
    max_chars: int | None = None
    trim: bool = False
    """Strip surrounding whitespace (deliberate saves) or keep the text as written (capture)."""
    git: GitInfo | None = None
    """The project's git hints when the candidate brings them (an import); otherwise they are
    looked up from ``cwd``."""


class Admission:
    """The admission rules of one entry point: exclusion globs compiled once, redaction on or
    off. Pure and thread-safe; one object serves every write path of a process."""

    def __init__(self, exclude: ExcludeMatcher, *, redacting: bool) -> None:
        self._exclude = exclude
        self._redacting = redacting

    # --- one method per kind of candidate ------------------------------------------------
    def captured_turn(
        self, turn: Turn, *, forgotten: Container[str] = NOTHING_FORGOTTEN
    ) -> Admitted | Refused:
        """A turn the capture pipeline read from a transcript; ``forgotten`` holds the
        tombstoned keys among its batch."""
        return self.admit(
            Candidate(
                turn.text,
                turn.raw_text,
                cwd=turn.cwd,
                key=turn.external_uuid,
                forgotten=forgotten,
                git=transcript_git(turn),
            )
        )

    def captured_action(
        self, action: Action, *, forgotten: Container[str] = NOTHING_FORGOTTEN
    ) -> AdmittedAction | Refused:
        """A tool call the capture pipeline read: refused when its key is tombstoned
        (``forgotten``) or its directory is excluded; its targets, command line and excerpt
        pass the same private-span removal and redaction as a turn's text."""
        if action.key in forgotten:
            return Refused("forgotten", "this action was forgotten (it has a tombstone)")
        excluded = self._exclude and action.cwd
        if excluded and self._exclude.excludes(action.cwd, git_info(action.cwd).root):
            return Refused("excluded", "this project is excluded from memory (CAPTURE_EXCLUDE)")
        if action.cwd and memory_off(action.cwd):
            return Refused("opted-out", OPTED_OUT)
        targets = tuple(t for t in map(self._action_text, action.targets) if t is not None)
        return AdmittedAction(
            targets, self._action_text(action.command), self._action_text(action.excerpt)
        )

    def imported_action(
        self, targets: Sequence[str], command: str | None, excerpt: str | None
    ) -> AdmittedAction:
        """An action's texts from an export bundle: the same cleaning as a captured one's."""
        kept = tuple(t for t in map(self._action_text, targets) if t is not None)
        return AdmittedAction(kept, self._action_text(command), self._action_text(excerpt))

    def _action_text(self, text: str | None) -> AdmittedText | None:
        """One text of an action as it may be stored (``None`` when nothing is left)."""
        if text is None:
            return None
        text = strip_private(_storable(text)).strip()
        if self._redacting and text:
            text = redact(text).text
        return AdmittedText(text) if text else None

    def saved_message(self, text: str, *, cwd: str | None) -> Admitted | Refused:
        """A turn an agent without capture saves through ``save_message``."""
        return self.admit(Candidate(text, cwd=cwd, max_chars=MAX_SAVED_CHARS, trim=True))

    def pinned_fact(self, text: str, *, cwd: str | None) -> Admitted | Refused:
        """A new fact an agent pins through ``manage_knowledge add``."""
        return self.admit(Candidate(text, cwd=cwd, max_chars=MAX_SAVED_CHARS, trim=True))

    def edited_text(self, text: str) -> Admitted | Refused:
        """New text for a stored memory, or a sub-profile note (``manage_knowledge``)."""
        return self.admit(Candidate(text, max_chars=MAX_SAVED_CHARS, trim=True))

    def imported(
        self, text: str, *, raw: str | None, cwd: str | None, git: GitInfo, key: str
    ) -> Admitted | Refused:
        """A memory from an export bundle (its key is the bundle's ``external_uuid``)."""
        return self.admit(Candidate(text, raw, cwd=cwd, key=key, git=git))

    # --- the steps -----------------------------------------------------------------------
    def admit(self, candidate: Candidate) -> Admitted | Refused:
        """Run ``candidate`` through the steps in the module's docstring, in order."""
        text = _storable(candidate.text)
        raw = _storable(candidate.raw) if candidate.raw else None
        refused = _refused_as_written(candidate, text, raw)
        if refused is not None:
            return refused
        text = strip_private(text)
        raw = strip_private(raw) if raw else None
        if candidate.trim:
            text = text.strip()
        if not text.strip():
            return Refused("private-only", "nothing left after removing private spans")
        git = candidate.git or (git_info(candidate.cwd) if candidate.cwd else NO_GIT)
        if self._exclude and self._exclude.excludes(candidate.cwd, git.root):
            return Refused("excluded", "this project is excluded from memory (CAPTURE_EXCLUDE)")
        if candidate.cwd and memory_off(candidate.cwd):
            return Refused("opted-out", OPTED_OUT)
        if self._redacting:
            text = redact(text).text
            raw = redact(raw).text if raw else raw
        return Admitted(AdmittedText(text), AdmittedText(raw) if raw else None, git)


def transcript_git(turn: Turn) -> GitInfo | None:
    """The repository of a captured turn: the local one its ``cwd`` lies in, else the one its
    transcript recorded (a checkout on another machine, or deleted); ``None``: look it up."""
    if not turn.repository:
        return None
    local = git_info(turn.cwd) if turn.cwd else NO_GIT
    return local if local != NO_GIT else GitInfo(None, turn.repository)


def _refused_as_written(candidate: Candidate, text: str, raw: str | None) -> Refused | None:
    """Steps 1-4: what refuses the text as it came in (empty, too long, an echo, forgotten)."""
    if not text.strip():
        return Refused("empty", "there is no text to store")
    if candidate.max_chars is not None and len(text) > candidate.max_chars:
        return Refused(
            "too-long",
            f"the text is {len(text)} characters; the limit is {candidate.max_chars}",
        )
    if is_brief_echo(text) or (raw and is_brief_echo(raw)):
        return Refused("echo", "the text is the memory brief itself (it carries its marker)")
    if candidate.key is not None and candidate.key in candidate.forgotten:
        return Refused("forgotten", "this turn was forgotten (it has a tombstone)")
    return None


def create_admission(settings: Settings, *, home: Path) -> Admission:
    """The admission rules ``settings`` ask for; ``home`` expands ``~`` in ``CAPTURE_EXCLUDE``."""
    return Admission(
        ExcludeMatcher.compile(settings.capture_exclude, home=str(home)),
        redacting=settings.redact_enabled,
    )


def rescrubbed(text: str) -> AdmittedText:
    """Stored ``text`` with what the redactor or the second opinion flags replaced by
    ``[redacted:<kind>]``; idempotent (``doctor --secrets --fix``)."""
    return AdmittedText(scrub(text))


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _storable(text: str) -> str:
    """``text`` without what PostgreSQL text cannot hold: NUL characters (dropped) and lone
    UTF-16 surrogates from a string a client cut in half (replaced by U+FFFD)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)
