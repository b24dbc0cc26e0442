"""Export as a readable Markdown tree, for people and for grep::

    README.md                         profiles and pinned facts
    <project>/<date>-<session>.md     one file per session: its turns in order, under each
                                      assistant turn its actions (tool calls), one line each

A turn without a project goes under ``no-project/``; turns without a session id are grouped
per platform and day (``<date>-<platform>.md``).

Only the headings are the export's own Markdown. What came from a transcript or a model (a
turn's text, a profile) is written as a fenced block whose fence is longer than any run of
backticks inside it (a pinned fact too), and a name on a heading's line (and each line of an
action under its turn) with every Markdown and HTML character escaped, so a turn holding
``## user`` or ``<script>`` reads as that text and can pass neither for a turn of its own nor
for markup. Actions without a turn of their own (a tool-only response) are not listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import psycopg

from agents_memory.errors import BundleError
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.export_files import make_private_dir, open_private
from agents_memory.store.actions import ActionRow
from agents_memory.store.owner import bundle
from agents_memory.store.search.action_text import action_line
from agents_memory.store.session_summaries import exported_summary

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_BACKTICKS = re.compile(r"`+")
_MARKUP = re.compile(r"[\\`*_\[\]<>#!|~&]")


@dataclass(slots=True)
class MarkdownReport:
    counts: dict[str, int] = field(default_factory=dict)
    files: int = 0
    size: int = 0
    written: set[Path] = field(default_factory=set)
    """The files this export wrote: one met again is appended to, any other replaced."""


def write_markdown(
    conn: psycopg.Connection[Any],
    root: Path,
    flt: bundle.ExportFilter,
    *,
    progress: fmt.Progress | None = None,
) -> MarkdownReport:
    """Write the tree under ``root`` (created ``0700`` when it is not there; its parent must be;
    files ``0600``, existing ones of the same names replaced)."""
    report = MarkdownReport()
    try:
        make_private_dir(root)
        _write_readme(conn, root, flt)
        report.files = 1
        total = bundle.count_memories(conn, flt)
        turns = _write_sessions(conn, root, flt, report, total, progress)
    except OSError as exc:
        raise BundleError(f"cannot write {root}: {exc.strerror or exc}") from None
    report.counts["memory"] = turns
    report.size = sum(p.stat().st_size for p in root.rglob("*.md"))
    return report


def _write_readme(conn: psycopg.Connection[Any], root: Path, flt: bundle.ExportFilter) -> None:
    lines = ["# Memory export", ""]
    for user in bundle.read_member(conn, "users", flt):
        lines += [f"## Profile of {_inline(user['user_name'])}", ""]
        core = user["core_profile"]
        lines += [fenced(core) if core else "_(no core profile yet)_", ""]
        if user["sub_profile"]:
            lines += ["### Notes", "", fenced(user["sub_profile"]), ""]
    pinned = bundle.pinned_facts(conn, flt)
    lines += ["## Pinned facts", ""]
    for fact in pinned:
        lines += [f"**{_when(fact['message_at'])}**", "", fenced(fact["message"]), ""]
    if not pinned:
        lines.append("_(none)_")
    with open_private(root / "README.md", "w") as out:
        out.write("\n".join(lines) + "\n")


def _write_sessions(
    conn: psycopg.Connection[Any],
    root: Path,
    flt: bundle.ExportFilter,
    report: MarkdownReport,
    total: int,
    progress: fmt.Progress | None,
) -> int:
    current: tuple[str, str] | None = None
    sink: IO[str] | None = None
    count = 0
    try:
        for turn in bundle.read_markdown_turns(conn, flt):
            key = _file_key(turn)
            if key != current:
                if sink is not None:
                    sink.close()
                current = key
                sink = _open_session(conn, root, key, turn, report.written)
                report.files += 1
            assert sink is not None
            sink.write(_turn_text(turn))
            count += 1
            if progress is not None and count % 1000 == 0:
                progress("markdown", count, total)
    finally:
        if sink is not None:
            sink.close()
    if progress is not None:
        progress("markdown", count, count)
    return count


def _file_key(turn: dict[str, Any]) -> tuple[str, str]:
    project = _safe(turn["project"]) or "no-project"
    day = turn["message_at"].astimezone().strftime("%Y-%m-%d")
    if turn["session_id"]:
        return project, f"session:{turn['agent_platform']}:{turn['session_id']}"
    return project, f"day:{turn['agent_platform']}:{day}"


def _open_session(
    conn: psycopg.Connection[Any],
    root: Path,
    key: tuple[str, str],
    first: dict[str, Any],
    written: set[Path],
) -> IO[str]:
    project = key[0]
    day = first["message_at"].astimezone().strftime("%Y-%m-%d")
    name = first["session_id"] or first["agent_platform"]
    folder = root / project
    make_private_dir(folder, ours=True)
    path = folder / f"{day}-{_safe(name)[:80]}.md"
    heading = f"# {_inline(first['project'] or 'no project')} · {_inline(first['agent_platform'])}"
    heading += f" · session {_inline(first['session_id'])}" if first["session_id"] else f" · {day}"
    sink = open_private(path, "a" if path in written else "w")
    written.add(path)
    if sink.tell() == 0:
        sink.write(heading + "\n")
        summary = (
            exported_summary(conn, first["agent_platform"], first["session_id"])
            if first["session_id"]
            else None
        )
        if summary is not None:
            title, text = summary
            sink.write(f"\n## Summary: {_inline(title)}\n\n{text}\n")
    return sink


def _turn_text(turn: dict[str, Any]) -> str:
    who = turn["role"]
    if turn["subagent"]:
        who += f" (subagent{' ' + turn['subagent_role'] if turn['subagent_role'] else ''})"
    details = [_inline(who), _when(turn["message_at"]), _inline(turn["agent_platform"])]
    if turn["agent_model"]:
        details.append(_inline(turn["agent_model"]))
    if turn["is_pinned"]:
        details.append("pinned")
    text = f"\n## {' · '.join(details)}\n\n{fenced(turn['message'])}\n"
    if turn.get("actions"):
        text += "\n" + "".join(f"- {_inline(line)}\n" for line in _action_lines(turn))
    return text


def _action_lines(turn: dict[str, Any]) -> list[str]:
    """The turn's actions, one line each (the line ``read_memory`` shows)."""
    return [
        action_line(
            ActionRow(
                agent_platform=turn["agent_platform"],
                session_id=turn["session_id"],
                memory_id=None,
                turn_key=None,
                started_at=None,
                duration_ms=None,
                **a,
            )
        )
        for a in turn["actions"]
    ]


def fenced(text: str) -> str:
    """``text`` as a fenced code block that nothing inside it can close: its fence is one
    backtick longer than the longest run of backticks in it (at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _inline(text: str) -> str:
    """``text`` on one line with every character Markdown or HTML would read escaped."""
    return _MARKUP.sub(lambda m: "\\" + m.group(), " ".join(text.split()))


def _when(at: datetime) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip("-.")
