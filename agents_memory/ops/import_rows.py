"""The shape a bundle's memory row must have before it is decided: what an export writes
(:mod:`agents_memory.store.owner.bundle`). A row of another shape (a hand-edited or hostile bundle:
a role that is no role, a number for a text, a NUL byte, a time that is no time) is refused
with what was expected, so it neither aborts the import nor lands half-understood."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

_TEXTS: Final = (
    "agent_model",
    "subagent_model",
    "subagent_role",
    "p_tag",
    "device_name",
    "session_id",
    "cwd",
    "git_root",
    "git_remote",
    "raw_message",
    "slot",
    "superseded_by",
)
"""Text or null."""
_REQUIRED_TEXTS: Final = ("external_uuid", "user_name", "agent_platform", "message")
_CHECKED: Final = tuple(
    n for n in (*_REQUIRED_TEXTS, *_TEXTS) if n not in ("message", "raw_message")
)
"""Texts checked for NULs and lone surrogates (admission cleans the message's own)."""
_FLAGS: Final = ("subagent", "is_active", "is_pinned", "tag_processed")
_TIMES: Final = ("message_at", "created_at", "updated_at")
_OPTIONAL_TIMES: Final = ("archived_at", "expires_at", "superseded_at")
_SOURCES: Final = ("capture", "save_message", "manage_knowledge", "import")


def _bad_text(value: str) -> str | None:
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def _time_problem(name: str, value: Any, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        return f"{name} is not a time"
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return f"{name} {value[:40]!r} is not an ISO 8601 time"
    return None


def memory_problem(row: Any) -> str | None:
    """What is wrong with bundle memory ``row`` (``None``: it has the shape an export writes).
    The message's own text may hold anything: admission cleans it (NULs, lone surrogates)."""
    if not isinstance(row, dict):
        return "the line is not a JSON object"
    return _field_problem(row) or _meaning_problem(row)


def _field_problem(row: dict[str, Any]) -> str | None:
    get = row.get
    for name in _REQUIRED_TEXTS:
        value = get(name)
        if type(value) is not str or not value:
            return f"{name} is not a non-empty text"
    texts = [get(name) for name in _TEXTS]
    for name, value in zip(_TEXTS, texts, strict=True):
        if value is not None and type(value) is not str:
            return f"{name} is not a text"
    for name in _FLAGS:
        if type(get(name)) is not bool:
            return f"{name} is not true or false"
    checked = [(n, get(n)) for n in _CHECKED]
    if any(v is not None and _bad_text(v) for _n, v in checked):
        return next(f"{n} {why}" for n, v in checked if v is not None and (why := _bad_text(v)))
    times = [(n, True) for n in _TIMES] + [(n, False) for n in _OPTIONAL_TIMES]
    return next((p for n, req in times if (p := _time_problem(n, get(n), required=req))), None)


def _meaning_problem(row: dict[str, Any]) -> str | None:
    """The rules between fields (the memory table's checks)."""
    tags = row.get("d_tag")
    if row.get("role") not in ("user", "assistant"):
        return f"role {str(row.get('role'))[:40]!r} is not user or assistant"
    if not isinstance(tags, list) or not all(isinstance(t, str) and not _bad_text(t) for t in tags):
        return "d_tag is not a list of texts"
    if row.get("source") not in (None, *_SOURCES):
        return f"source {str(row.get('source'))[:40]!r} is none of {', '.join(_SOURCES)}"
    if not row["subagent"] and (row.get("subagent_model"), row.get("subagent_role")) != (
        None,
        None,
    ):
        return "a subagent model or role on a turn that is not a subagent's"
    if row["is_pinned"] and row.get("archived_at") is not None:
        return "pinned and archived at once"
    return None


HALF_MAX: Final = 65504.0
"""The largest magnitude a ``halfvec`` component holds."""


def vector_problem(vector: Any, dim: int | None) -> str | None:
    """What is wrong with a ``vectors.jsonl`` row for this pool's ``dim`` (``None``: fine)."""
    if not isinstance(vector, dict) or not isinstance(vector.get("model"), str):
        return "not a vector row with a model"
    text = vector.get("embedding")
    if not isinstance(text, str) or not text.startswith("[") or not text.endswith("]"):
        return "its embedding is not a [..] list"
    try:
        values = [float(v) for v in text[1:-1].split(",")]
    except ValueError:
        return "its embedding holds something other than numbers"
    if len(values) != dim:
        return f"its embedding has {len(values)} dimensions, not {dim}"
    if not all(abs(v) <= HALF_MAX for v in values):
        return "its embedding holds a value out of range"
    return None


_ACTION_KINDS: Final = ("edit", "write", "read", "shell", "search", "web", "mcp", "agent", "other")
_ACTION_OUTCOMES: Final = ("ok", "error", "interrupted", "unknown")
_ACTION_NAMES: Final = ("user_name", "agent_platform", "external_key", "tool")
"""Texts an action must have (and that admission does not clean: checked for NULs)."""
_ACTION_KEYS: Final = ("session_id", "turn", "turn_key", "device_name")
_ACTION_TEXTS: Final = ("command", "excerpt")
"""Text or null, cleaned by admission."""
_ACTION_INTS: Final = ("exit_code", "lines_added", "lines_removed", "duration_ms")


def action_problem(row: Any) -> str | None:
    """What is wrong with bundle action ``row`` (``None``: it has the shape an export writes).
    Its command, targets and excerpt may hold anything text can: admission cleans them."""
    if not isinstance(row, dict):
        return "the line is not a JSON object"
    return _action_text_problem(row) or _action_value_problem(row)


def _action_text_problem(row: dict[str, Any]) -> str | None:
    for name in (*_ACTION_NAMES, *_ACTION_KEYS):
        value = row.get(name)
        if name in _ACTION_NAMES and (type(value) is not str or not value):
            return f"{name} is not a non-empty text"
        if value is not None and (type(value) is not str or _bad_text(value)):
            return f"{name} is not a text of plain characters"
    targets = row.get("targets")
    if targets is not None and (
        not isinstance(targets, list) or not all(type(t) is str for t in targets)
    ):
        return "targets is not a list of texts"
    if any(row.get(n) is not None and type(row.get(n)) is not str for n in _ACTION_TEXTS):
        return "command or excerpt is not a text"
    return None


def _action_value_problem(row: dict[str, Any]) -> str | None:
    for name in _ACTION_INTS:
        value = row.get(name)
        if value is not None and (type(value) is not int or abs(value) >= 2**31):
            return f"{name} is not a whole number"
    if row.get("kind") not in _ACTION_KINDS:
        return f"kind {str(row.get('kind'))[:40]!r} is none of {', '.join(_ACTION_KINDS)}"
    if row.get("outcome") not in _ACTION_OUTCOMES:
        return f"outcome {str(row.get('outcome'))[:40]!r} is none of {', '.join(_ACTION_OUTCOMES)}"
    started = _time_problem("started_at", row.get("started_at"), required=False)
    return started or _time_problem("created_at", row.get("created_at"), required=False)
