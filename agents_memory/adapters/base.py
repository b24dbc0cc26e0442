"""What a platform adapter is.

An adapter knows where one client writes its transcripts and how to turn a region of one
transcript file into normalized :class:`Turn` rows. Adapters are pure: no database, no
watching, no clock. The capture daemon owns files, cursors and storage; it asks the adapter:

* :meth:`Adapter.roots` — the directories to watch under a home directory;
* :meth:`Adapter.owns` — whether a path under a root is a transcript of this client;
* :meth:`Adapter.read_mode` — ``"append"`` (JSONL read incrementally from a byte offset),
  ``"whole"`` (the file is rewritten or compressed and must be parsed in full each time) or
  ``"database"`` (a database file, e.g. SQLite, that the adapter queries itself, read-only);
* :meth:`Adapter.companions` and :meth:`Adapter.transcript_for` — files whose change is a
  change of a transcript (a SQLite database's ``-wal``), and the transcript an event on such a
  file concerns;
* :meth:`Adapter.parse` — bytes from ``offset`` (``"append"``), the whole file (``"whole"``) or
  nothing (``"database"``: the adapter reads the file itself) into turns, plus where the next
  read must start and the state to carry to it;
* :meth:`Adapter.install_plan` — what ``memory-capture install`` puts into the client's config
  (hooks, MCP server entry, a managed context block) as an :class:`InstallPlan`: data only,
  applied (or shown for ``--dry-run``, or removed by ``uninstall``) by ``agents_memory.install``;
* :meth:`Adapter.post_install`, :meth:`Adapter.post_uninstall`, :meth:`Adapter.uninstall_edits`
  and :meth:`Adapter.installed_extras` — a client's install steps beyond file edits (Codex's
  hook trust, Hermes's own ``mcp add``/``mcp remove``), through an :class:`InstallContext` the
  installer lends (adapters never write files).

What the session-start hook and the MCP server need to know of a client is here too:
:attr:`Adapter.display_name`, :attr:`Adapter.mcp_client_names`, :attr:`Adapter.brief_limit`
and :meth:`Adapter.hook_output`; the per-prompt hook's :attr:`Adapter.prompt_hook_event` and
:meth:`Adapter.prompt_hook_output`.

Stable ids: the same turn parsed twice, from any offset, in any later read, yields the same
``external_uuid``; that is what makes capture idempotent across crashes and rescans.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

Role = Literal["user", "assistant"]
ActionKind = Literal["edit", "write", "read", "shell", "search", "web", "mcp", "agent", "other"]
ActionOutcome = Literal["ok", "error", "interrupted", "unknown"]
ReadMode = Literal["append", "whole", "database"]
JsonState = Mapping[str, Any]
"""Adapter state carried between reads of one file (JSON-serialisable; stored with the cursor)."""


MAX_KEY: Final = 512
"""The longest ``external_uuid`` a turn carries: a longer one (a client's id that is a whole
document, in a damaged or hostile transcript) keeps its first characters and gets a digest of
all of it, so it stays unique and the same on every read."""


def bounded_key(key: str) -> str:
    """``key``, or when it is over :data:`MAX_KEY` characters its head and a digest of it."""
    if len(key) <= MAX_KEY:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[:200]}#{digest}"


@dataclass(frozen=True, slots=True)
class Turn:
    """One user or assistant turn, normalized across platforms. Its key is bounded
    (:func:`bounded_key`) whatever the adapter built it from."""

    external_uuid: str
    platform: str
    role: Role
    text: str
    session_id: str | None = None
    message_at: datetime | None = None
    model: str | None = None
    subagent: bool = False
    subagent_model: str | None = None
    subagent_role: str | None = None
    cwd: str | None = None
    raw_text: str | None = None
    """The original text when the adapter cleaned an envelope out of it (else ``None``)."""
    repository: str | None = None
    """The repository URL the client recorded for the session (Codex's git metadata): the
    project's identity when ``cwd`` is not a git repository on this machine."""

    def __post_init__(self) -> None:
        if len(self.external_uuid) > MAX_KEY:
            object.__setattr__(self, "external_uuid", bounded_key(self.external_uuid))


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call an assistant turn issued, normalized across platforms: what was done, on
    what, and how it ended; never a read file's contents, a whole diff or binary output.

    ``key`` is the client's tool-call id; it is unique only within one platform and session
    (the store's identity is all three, per user). ``tool`` is ``None`` for a
    *result only* (the call's outcome read in a later region than the call): it completes
    the stored call and is never stored alone. Built by the adapters through
    :mod:`agents_memory.adapters._actions`."""

    key: str
    platform: str
    session_id: str | None
    tool: str | None
    kind: ActionKind = "other"
    turn_key: str | None = None
    """The ``external_uuid`` of the assistant turn that issued the call (``None``: unknown)."""
    targets: tuple[str, ...] = ()
    """File paths (relative to ``cwd`` where they lie under it), URLs, the MCP ``server/tool``."""
    command: str | None = None
    """The command line of a shell call, the pattern of a search, the query of a web search."""
    outcome: ActionOutcome = "unknown"
    exit_code: int | None = None
    excerpt: str | None = None
    """A short excerpt of the result: the error lines of a failure, the last lines of a shell
    command's output (capped, :data:`agents_memory.adapters._actions.EXCERPT_CHARS`)."""
    added: int | None = None
    removed: int | None = None
    """An edit's diffstat (lines added and removed)."""
    started_at: datetime | None = None
    duration_ms: int | None = None
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class ParseIssue:
    """A record that could not be used (or, when ``repaired``, was used only after its
    invalid UTF-8 was replaced by U+FFFD): where it is and why. Never fatal."""

    offset: int
    reason: str
    repaired: bool = False


@dataclass(slots=True)
class ParseResult:
    turns: list[Turn]
    resume_offset: int
    """Absolute byte offset where the next ``append`` read must start. It is at most the end of
    the last complete line; an adapter may hold back a trailing group it may have to re-read
    (for example Claude assistant blocks that share one ``message.id``): turns from that group
    are still returned now and returned again, fuller, under the same ``external_uuid``."""
    state: dict[str, Any] = field(default_factory=dict)
    unknown_kinds: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    """The tool calls (and results of calls read earlier) in this read, in file order."""


# --- install plans -------------------------------------------------------------------------

EditFormat = Literal["json", "toml", "text-block", "file"]
MCP_SERVER_NAME = "mcp-agents-memory"
PROMPT_HOOK_SEC = 5
"""The client's own time-out for our per-prompt hook: a ceiling only (the hook leaves after
``PROMPT_HOOK_TIMEOUT_MS``, 300 ms by default, whatever happens)."""
BLOCK_BEGIN = "<!-- mcp-agents-memory:begin -->"
BLOCK_END = "<!-- mcp-agents-memory:end -->"
BLOCK_PLACEHOLDER = (
    "Long-term memory (mcp-agents-memory): the capture daemon refreshes this block with the\n"
    "memory brief. Until it does, call the `memory_startup` tool of the `mcp-agents-memory`\n"
    "MCP server at the start of a session."
)


@dataclass(frozen=True, slots=True)
class Commands:
    """Absolute paths of the two console scripts, as the installer resolved them."""

    memory_capture: Path
    mcp_server: Path

    def hook(self, *args: str) -> str:
        """A shell command line running ``memory-capture hook <args>``."""
        return shlex.join([str(self.memory_capture), "hook", *args])


def is_our_hook_command(command: object) -> bool:
    """Whether a hook handler's command is one of ours (``…/memory-capture hook …``), whatever
    directory the script was installed in: a reinstall from a new venv replaces, not doubles."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return len(words) >= 2 and Path(words[0]).name == "memory-capture" and words[1] == "hook"


@dataclass(frozen=True, slots=True)
class OwnedEntry:
    """A mapping we own at ``path`` (e.g. ``mcpServers.mcp-agents-memory``). Install sets it
    (keeping the user's values for the keys in ``preserve`` and any keys we do not write);
    uninstall deletes it."""

    path: tuple[str, ...]
    value: Mapping[str, Any]
    preserve: tuple[str, ...] = ("env",)


@dataclass(frozen=True, slots=True)
class EnsureSetting:
    """A setting the hooks need, set only when absent (never overriding the user's choice).
    Uninstall deletes it only if this installer created it and it still has ``value``."""

    path: tuple[str, ...]
    value: Any


@dataclass(frozen=True, slots=True)
class HookGroup:
    """A matcher group in ``<container>.<event>`` (the Claude/Codex/Gemini hooks layout). Ours
    are the handlers whose command :func:`is_our_hook_command`; install puts the group in place
    of an earlier one of ours (or appends it), uninstall removes our handlers and any group
    they leave empty."""

    event: str
    group: Mapping[str, Any]
    container: tuple[str, ...] = ("hooks",)


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A block between :data:`BLOCK_BEGIN` and :data:`BLOCK_END` in a Markdown file. Install
    appends it with ``content`` when missing and never touches an existing block's content (the
    daemon refreshes it); uninstall removes the block."""

    content: str = BLOCK_PLACEHOLDER


@dataclass(frozen=True, slots=True)
class WholeFile:
    """A file that is entirely ours (a systemd unit): written with ``content``, deleted on
    uninstall."""

    content: str


PlanEntry = OwnedEntry | EnsureSetting | HookGroup | TextBlock | WholeFile


@dataclass(frozen=True, slots=True)
class FileEdit:
    """The entries we own in one file. ``format`` says how the file is read and written:
    ``json`` and ``toml`` (comments kept) hold :class:`OwnedEntry`, :class:`EnsureSetting` and
    :class:`HookGroup`; ``text-block`` holds one :class:`TextBlock`; ``file`` one
    :class:`WholeFile`."""

    path: Path
    format: EditFormat
    entries: tuple[PlanEntry, ...]
    summary: str = ""


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """What to install for one client; ``notes`` are printed to the user. Steps that need more
    than file edits are the adapter's :meth:`Adapter.post_install`."""

    platform: str
    edits: tuple[FileEdit, ...] = ()
    notes: tuple[str, ...] = ()


Reader = Callable[[Path], str | None]
"""Reads a config file as the installer does: its text, ``None`` when it does not exist;
raises :class:`ConfigFileError` when it cannot be read (through a symlink, in UTF-8)."""


@dataclass(frozen=True, slots=True)
class InstallContext:
    """What the installer lends :meth:`Adapter.post_install` for one client under ``home``."""

    home: Path
    dry_run: bool
    """``True`` for ``--dry-run``: say what would be done, change nothing."""
    which: Callable[[str], str | None]
    """The PATH lookup (injected, so tests can point it at a fake executable)."""
    read_text: Reader
    apply: Callable[[FileEdit], None]
    """Write ``edit`` as install does (backed up, atomically, shown in the report) and record
    its entries as ours, so ``uninstall`` removes them. Raises :class:`ConfigFileError` or
    :class:`OSError`."""
    commands: Commands | None = None
    """The console scripts, for a step that registers them through the client's own command."""


def stdio_server(commands: Commands, **extra: Any) -> dict[str, Any]:
    """The MCP server entry most clients share: our server over stdio, no arguments."""
    return {"command": str(commands.mcp_server), "args": [], **extra}


def hook_group(command: str, *, matcher: str | None = None, **handler: Any) -> dict[str, Any]:
    """A Claude-style matcher group with one command handler."""
    group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [{"type": "command", "command": command, **handler}]
    return group


class Adapter(ABC):
    """One client. Subclasses live in ``adapters/<platform>.py`` and register in the registry."""

    name: str
    """Platform name stored in ``memory.agent_platform`` (e.g. ``claude-code``)."""

    display_name: str
    """The client's name for people (``Claude Code``), used in help and tool descriptions."""

    extra_platforms: tuple[str, ...] = ()
    """Other ``memory.agent_platform`` values this adapter writes: one client family may label
    turns by the app that wrote them (``codex-desktop``)."""

    @property
    def platforms(self) -> tuple[str, ...]:
        """Every platform name this adapter writes, :attr:`name` first."""
        return (self.name, *self.extra_platforms)

    short_name: str | None = None
    """A shorter name people may type for :attr:`name` (``claude``, ``codex``): commands and
    tools accept it through :func:`agents_memory.adapters.resolve_platform`, tables show it."""

    binaries: tuple[str, ...] = ()
    """Executables whose presence on ``PATH`` means the client is installed."""

    mcp_client_names: tuple[str, ...] = ()
    """Lower-case fragments of the MCP ``clientInfo.name`` this client reports (``codex`` for
    ``codex-mcp-client``): how the MCP server knows which captured client is calling."""

    mcp_client_exact_names: tuple[str, ...] = ()
    """Lower-case ``clientInfo.name`` values that mean this client only when they are the whole
    name: a client that reports its SDK's generic default (Hermes sends the Python SDK's
    ``mcp``), which as a fragment would claim every name containing it."""

    brief_limit: int = 6000
    """Characters of injected context this client accepts: the session-start brief is cut to
    fit it."""

    prompt_hook_event: str | None = None
    """The client's per-prompt hook event whose output adds context before the model answers
    (``UserPromptSubmit``, ``BeforeAgent``); ``None``: it has none (the tools remain)."""

    def prompt_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """The per-prompt hook's JSON as recall reads it (``prompt``, ``session_id``,
        ``cwd``): a client that hands the hook more than the user typed (context our own hooks
        added) cleans it here. Default: as it came."""
        return event

    def prompt_hook_output(self, text: str) -> str:
        """What the per-prompt hook prints for the memories in ``text`` (empty: print nothing).
        Default: the ``hookSpecificOutput`` envelope under :attr:`prompt_hook_event`."""
        if not text or self.prompt_hook_event is None:
            return ""
        payload = {
            "hookSpecificOutput": {
                "hookEventName": self.prompt_hook_event,
                "additionalContext": text,
            }
        }
        return json.dumps(payload, ensure_ascii=False)

    def hook_output(self, brief: str) -> str:
        """What the session-start hook prints for ``brief`` (empty: print nothing). Default:
        the ``hookSpecificOutput`` JSON envelope Claude Code, Codex and Gemini CLI read."""
        if not brief:
            return ""
        payload = {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief}
        }
        return json.dumps(payload, ensure_ascii=False)

    @abstractmethod
    def roots(self, home: Path) -> list[Path]:
        """Directories under ``home`` that may contain this client's transcripts (may not exist)."""

    @abstractmethod
    def owns(self, path: Path, home: Path) -> bool:
        """Whether ``path`` (a file under one of :meth:`roots`) is a transcript of this client."""

    def read_mode(self, path: Path) -> ReadMode:
        """How the daemon must read ``path``. Default: incremental JSONL.

        ``"database"``: ``path`` is a database the adapter opens itself, read-only and never
        locking the client out. The daemon hands :meth:`parse` no bytes (``data`` is empty,
        ``offset`` 0) and calls it whenever ``path`` or one of its :meth:`companions` changed;
        the adapter's own cursor (the last row or change time it returned) lives in ``state``,
        and ``resume_offset`` is ignored. A database that cannot be read right now (locked,
        mid-write) is a :class:`ParseIssue` with ``state`` unchanged, never an exception."""
        return "append"

    def companions(self, path: Path) -> tuple[Path, ...]:
        """Files beside transcript ``path`` whose changes are changes of it (a SQLite
        database's ``-wal`` journal, where the writes land until a checkpoint). Default none."""
        return ()

    def transcript_for(self, path: Path, home: Path) -> Path | None:
        """The transcript a change of ``path`` concerns: ``path`` itself when this adapter
        :meth:`owns` it, the transcript whose :meth:`companions` include it, else ``None``.
        Default: ``path`` when owned."""
        return path if self.owns(path, home) else None

    @abstractmethod
    def parse(
        self,
        path: Path,
        data: bytes,
        *,
        offset: int,
        state: JsonState,
        final: bool = False,
        home: Path | None = None,
    ) -> ParseResult:
        """Parse ``data`` read from ``path`` starting at absolute byte ``offset``.

        ``append`` mode: ``data`` holds complete lines only (it ends with ``\\n`` or is empty).
        ``whole`` mode: ``data`` is the whole file as stored (``offset`` is 0). ``state`` is what
        the previous call returned for this file (empty on a first read or a rescan from 0).
        ``final`` asks the adapter to hold nothing back (the file is idle or being flushed).
        ``home`` is the home directory the file was found under, for adapters that read a
        sidecar there (e.g. Gemini's ``projects.json``); ``None`` when unknown.
        """

    def config_markers(self, home: Path) -> list[Path]:
        """Paths whose existence means the client is installed here (besides :attr:`binaries`)."""
        return []

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """What to install in this client under ``home``. Pure (it may look at which config
        directories exist, never writes). Default: nothing."""
        return InstallPlan(self.name)

    def post_install(self, ctx: InstallContext) -> list[str]:
        """A step after this client's plan was written (or, for ``--dry-run``, what it would
        do): notes for the user. It must not raise for the client's own failures; it says
        what the user should do instead. Default: nothing."""
        return []

    def post_uninstall(self, ctx: InstallContext) -> list[str]:
        """A step after this client's entries were removed (or, for ``--dry-run``, what it
        would do), undoing what :meth:`post_install` did through the client's own command:
        notes for the user. Like :meth:`post_install` it never raises for the client's
        failures. Default: nothing."""
        return []

    def uninstall_edits(self, home: Path, read_text: Reader) -> list[FileEdit]:
        """Edits that remove what :meth:`post_install` added beyond the plan, as it is now
        (merged with the plan's edits of the same file). May raise :class:`ConfigFileError`.
        Default: none."""
        return []

    def installed_extras(self, home: Path, read_text: Reader) -> list[tuple[Path, str]]:
        """Entries :meth:`post_install` added that are present under ``home``, as
        ``(file, what)`` for ``status``. Default: none."""
        return []
