"""A bundle's rows other than memories, each decided: users (new, present, or a profile that
differs: a conflict; empty profile fields filled are listed), project tags by name, and the
tables that name users, tags and memories (profile and memory history, summaries,
suggestions): inserted, present, or refused with their reason (a user, project or memory
neither this pool nor the bundle has; admission; a row the database refuses)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import psycopg

from agents_memory.admission.admit import Admission, Refused
from agents_memory.gitinfo import GitInfo
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops import import_report as why
from agents_memory.ops.import_report import ImportReport
from agents_memory.store.owner import bundle_extra
from agents_memory.store.owner import bundle_import as store

Numbered = Iterable[tuple[int, Any]]
"""A member's rows (JSON values, of any shape) with their line numbers."""


class TableMerge:
    """The non-memory members of one import (one transaction)."""

    def __init__(
        self, conn: psycopg.Connection[Any], report: ImportReport, admission: Admission
    ) -> None:
        self.conn = conn
        self.report = report
        self.admission = admission
        self.known_users: set[str] = set()
        self.known_tags: set[str] = set()

    def _malformed(self, table: str, line: int, detail: str) -> None:
        self.report.refuse(table, line, why.MALFORMED, detail)

    def users(self, rows: Numbered) -> None:
        tally = self.report.tally("users")
        for line, row in rows:
            tally.rows += 1
            name = row.get("user_name") if isinstance(row, dict) else None
            if not isinstance(name, str) or not name:
                self._malformed("users", line, "no user_name text")
                continue
            try:
                merged = store.guarded(self.conn, partial(store.merge_user, self.conn, row))
            except store.RowRefused as exc:
                self._malformed("users", line, f"user {name!r}: {exc}")
                continue
            filled = ", ".join(merged.filled)
            if merged.created:
                tally.new += 1
                self.report.new_user(repr(name) + (f" (with {filled})" if filled else ""))
            elif merged.differ:
                detail = (
                    f"user {name!r}: {', '.join(merged.differ)} differs from this pool's"
                    " (this pool's text kept)"
                )
                self.report.refuse("users", line, why.CONFLICT, detail)
            else:
                tally.present += 1
            if filled and not merged.created:
                self.report.profile_change(
                    f"user {name!r}: {filled} filled from the bundle (it was empty here)"
                )
        self.known_users = store.user_names(self.conn)

    def small(
        self, table: str, rows: Numbered, progress: fmt.Progress | None, total: int | None
    ) -> None:
        tally = self.report.tally(table)
        for line, found in rows:
            tally.rows += 1
            row = self._placeable(table, line, found)
            if row is not None:
                self._insert(table, line, row)
            if progress is not None and tally.rows % 1000 == 0:
                progress(table, tally.rows, total)

    def _insert(self, table: str, line: int, row: dict[str, Any]) -> None:
        tally = self.report.tally(table)
        try:
            inserted = store.guarded(self.conn, lambda: store.insert_row(self.conn, table, row))
        except store.RowRefused as exc:
            self._malformed(table, line, str(exc))
            return
        if inserted:
            tally.new += 1
        elif table == "memory_history" and not store.memory_known(self.conn, row["memory"]):
            detail = f"an edit of memory {row['memory']!r}, which neither pool nor bundle has"
            self.report.refuse(table, line, why.UNKNOWN_MEMORY, detail)
        elif table == "task_pins" and not bundle_extra.pin_known(
            self.conn, row["user_name"], row["pin"]
        ):
            detail = f"an update of pin {row['pin']!r}, which neither pool nor bundle has"
            self.report.refuse(table, line, why.UNKNOWN_PIN, detail)
        else:
            tally.present += 1

    def _placeable(self, table: str, line: int, row: Any) -> dict[str, Any] | None:
        """``row`` ready to insert, or ``None`` when what it names is missing (refused here)."""
        if not isinstance(row, dict):
            self._malformed(table, line, "the line is not a JSON object")
            return None
        user = row.get("user_name")
        if table not in ("memory_history", "tombstones") and (
            not isinstance(user, str) or user not in self.known_users
        ):
            self.report.refuse(table, line, why.UNKNOWN_USER, f"unknown user {user!r}")
            return None
        tags = [row.get("p_tag")] if table == "tag_summaries" else []
        if table == "alias_suggestions":
            tags = [row.get("source_tag"), row.get("target_tag")]
        missing = [
            t
            for t in tags
            if t is not None and (not isinstance(t, str) or t not in self.known_tags)
        ]
        if missing or (table == "tag_summaries" and row.get("p_tag") is row.get("d_tag") is None):
            detail = f"unknown project {missing[0]!r}" if missing else "no project and no topic"
            self.report.refuse(table, line, why.UNKNOWN_TAG if missing else why.NO_TARGET, detail)
            return None
        if table == "task_pins":
            return self._admitted_pin(line, row)
        return self._admitted_edit(line, row) if table == "memory_history" else row

    def _admitted_edit(self, line: int, row: dict[str, Any]) -> dict[str, Any] | None:
        """A memory edit with its old text through admission (``None``: refused here)."""
        key, text = row.get("memory"), row.get("old_message")
        if not isinstance(key, str) or not isinstance(text, str):
            self._malformed("memory_history", line, "memory and old_message are not texts")
            return None
        result = self.admission.imported(text, raw=None, cwd=None, git=GitInfo(None, None), key=key)
        if isinstance(result, Refused):
            detail = f"an earlier text of {key!r}: refused by admission ({result.reason})"
            self.report.refuse("memory_history", line, result.reason, detail)
            return None
        return {**row, "old_message": result.text}

    def _admitted_pin(self, line: int, row: dict[str, Any]) -> dict[str, Any] | None:
        """A task pin event with its title and note through admission (redaction)."""
        texts: dict[str, str | None] = {}
        for name in ("title", "note"):
            text = row.get(name)
            if text is None and name == "note":
                texts[name] = None
                continue
            if not isinstance(text, str):
                self._malformed("task_pins", line, f"{name} is not a text")
                return None
            result = self.admission.edited_text(text)
            if isinstance(result, Refused):
                detail = f"the {name} of pin {row.get('pin')!r}: refused ({result.reason})"
                self.report.refuse("task_pins", line, result.reason, detail)
                return None
            texts[name] = result.text
        return {**row, **texts}

    def tags(self, rows: list[tuple[int, Any]]) -> None:
        """Tags by name; an alias is inserted after the tag it points at (a cycle, or a target
        the bundle lacks, is linked afterwards or left unaliased)."""
        tally = self.report.tally("project_tags")
        tally.rows = len(rows)
        good: list[tuple[int, dict[str, Any]]] = []
        for line, row in rows:
            if _tag_shape(row):
                good.append((line, row))
            else:
                self._malformed("project_tags", line, "not a tag: a name text, alias_of a text")
        known = store.existing_tags(self.conn, [r["name"] for _n, r in good])
        first: dict[str, tuple[int, dict[str, Any]]] = {}
        waiting: list[tuple[int, dict[str, Any]]] = []
        for line, row in good:
            earlier = first.setdefault(row["name"], (line, row))
            if earlier[0] != line and earlier[1] != row:
                detail = f"tag {row['name']!r} as line {earlier[0]}, with other content"
                self.report.refuse("project_tags", line, why.DUPLICATE_NAME, detail)
            elif earlier[0] != line or row["name"] in known:
                tally.present += 1
            else:
                waiting.append((line, row))
        while waiting:
            ready = [(n, r) for n, r in waiting if r["alias_of"] is None or r["alias_of"] in known]
            for line, row in ready or waiting:
                self._tag(line, row, late=not ready)
                known.add(row["name"])
            waiting = [(n, r) for n, r in waiting if r["name"] not in known]
        self.known_tags = store.tag_names(self.conn)

    def _tag(self, line: int, row: dict[str, Any], *, late: bool) -> None:
        """Insert one tag (a ``late`` one without its alias, linked after)."""
        try:
            store.guarded(
                self.conn,
                lambda: store.insert_row(
                    self.conn, "project_tags", {**row, "alias_of": None} if late else row
                ),
            )
        except store.RowRefused as exc:
            self._malformed("project_tags", line, f"tag {row['name']!r}: {exc}")
            return
        self.report.tally("project_tags").new += 1
        if late and row["alias_of"] is not None:
            store.link_alias(self.conn, row["name"], row["alias_of"])
            if not store.existing_tags(self.conn, [row["alias_of"]]):
                text = f"tag {row['name']!r} imported without its alias of the unknown"
                self.report.note("project_tags", line, f"{text} {row['alias_of']!r}")


def _tag_shape(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and isinstance(row.get("name"), str)
        and bool(row["name"])
        and isinstance(row.get("alias_of"), str | None)
    )
