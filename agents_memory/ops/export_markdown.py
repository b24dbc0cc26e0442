"""Export as a readable Markdown tree, for people and for grep::

    README.md                         profiles and pinned facts
    <project>/<date>-<session>.md     one file per session: its turns in order

A turn without a project goes under ``no-project/``; turns without a session id are grouped
per platform and day (``<date>-<platform>.md``).
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
from agents_memory.store import bundle

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(slots=True)
class MarkdownReport:
    counts: dict[str, int] = field(default_factory=dict)
    files: int = 0
    size: int = 0


def write_markdown(
    conn: psycopg.Connection[Any],
    root: Path,
    flt: bundle.ExportFilter,
    *,
    progress: fmt.Progress | None = None,
) -> MarkdownReport:
    """Write the tree under ``root`` (created; existing files of the same names replaced)."""
    report = MarkdownReport()
    try:
        root.mkdir(parents=True, exist_ok=True)
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
        lines += [f"## Profile of {user['user_name']}", ""]
        lines += [user["core_profile"] or "_(no core profile yet)_", ""]
        if user["sub_profile"]:
            lines += ["### Notes", "", user["sub_profile"], ""]
    pinned = bundle.pinned_facts(conn, flt)
    lines += ["## Pinned facts", ""]
    lines += [f"- {_when(p['message_at'])} — {_one_line(p['message'])}" for p in pinned] or [
        "_(none)_"
    ]
    (root / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


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
                sink = _open_session(root, key, turn)
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


def _open_session(root: Path, key: tuple[str, str], first: dict[str, Any]) -> IO[str]:
    project, session = key
    day = first["message_at"].astimezone().strftime("%Y-%m-%d")
    name = first["session_id"] or first["agent_platform"]
    folder = root / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{day}-{_safe(name)[:80]}.md"
    heading = f"# {first['project'] or 'no project'} · {first['agent_platform']}"
    heading += f" · session {first['session_id']}" if first["session_id"] else f" · {day}"
    sink = path.open("a" if path.exists() and session.startswith("day:") else "w", encoding="utf-8")
    if sink.tell() == 0:
        sink.write(heading + "\n")
    return sink


def _turn_text(turn: dict[str, Any]) -> str:
    who = turn["role"]
    if turn["subagent"]:
        who += f" (subagent{' ' + turn['subagent_role'] if turn['subagent_role'] else ''})"
    details = [who, _when(turn["message_at"]), turn["agent_platform"]]
    if turn["agent_model"]:
        details.append(turn["agent_model"])
    if turn["is_pinned"]:
        details.append("pinned")
    return f"\n## {' · '.join(details)}\n\n{turn['message'].rstrip()}\n"


def _when(at: datetime) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip("-.")
