"""Secrets in the stored pool: find them with two opinions, re-redact them everywhere.

The CLI (``mcp-agents-memory doctor --secrets [--fix]``) and the web console call these:

* :func:`scan_secrets` reads every place memory text lives (messages, raw texts, edit history,
  tag summaries, session summaries, profiles and their history, the actions' commands,
  targets and excerpts) and asks the redactor and the independent second opinion
  (:mod:`agents_memory.admission.scrub`) about each; it reports ``detector:kind`` and ids,
  never a value.
* :func:`fix_secrets` rewrites what a scan found with
  :func:`~agents_memory.admission.admit.rescrubbed` through
  :func:`agents_memory.store.owner.rewrite.rewrite_texts` (one transaction, vectors re-queued; what
  was built from the rows goes through :func:`agents_memory.store.owner.derived.update_derived`, the
  path ``forget`` takes), and the actions it found with
  :func:`agents_memory.store.owner.rewrite_actions.rewrite_actions`, in the same
  transaction; ``dry_run`` counts first. A second fix changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg

from agents_memory.admission.admit import rescrubbed
from agents_memory.admission.scrub import REDACTOR, SECOND_OPINION, findings
from agents_memory.config import Settings
from agents_memory.store.entry import open_user_connection
from agents_memory.store.health import SecretScan
from agents_memory.store.owner.derived import settle_search_words
from agents_memory.store.owner.rewrite import (
    RewriteCounts,
    memory_texts,
    profile_texts,
    rewrite_texts,
    session_summary_texts,
    summary_texts,
)
from agents_memory.store.owner.rewrite_actions import action_texts, rewrite_actions

MAX_EXAMPLE_IDS = 20


def _kinds(texts: list[str]) -> set[str]:
    return {kind for text in texts for kind in findings(text)}


def scan_secrets(conn: psycopg.Connection[Any], *, max_ids: int = MAX_EXAMPLE_IDS) -> SecretScan:
    """Ask both detectors about every stored text; kinds and ids only."""
    scan = SecretScan(rows_scanned=0, kinds={}, example_ids={})
    agreement = {"both": 0, "redactor_only": 0, "second_opinion_only": 0}
    for memory_id, texts in memory_texts(conn):
        scan.rows_scanned += 1
        kinds = _kinds(texts)
        if not kinds:
            continue
        scan.memory_ids.append(memory_id)
        for kind in sorted(kinds):
            scan.kinds[kind] = scan.kinds.get(kind, 0) + 1
            ids = scan.example_ids.setdefault(kind, [])
            if len(ids) < max_ids:
                ids.append(memory_id)
        by = {kind.split(":", 1)[0] for kind in kinds}
        agreement[
            "both"
            if by == {REDACTOR, SECOND_OPINION}
            else "redactor_only"
            if by == {REDACTOR}
            else "second_opinion_only"
        ] += 1
    scan.agreement = agreement
    for summary_id, summary in summary_texts(conn):
        scan.summaries_scanned += 1
        for kind in sorted(_kinds([summary])):
            scan.summary_ids.setdefault(kind, []).append(summary_id)
    for session_summary_id, texts in session_summary_texts(conn):
        scan.session_summaries_scanned += 1
        for kind in sorted(_kinds(texts)):
            scan.session_summary_ids.setdefault(kind, []).append(session_summary_id)
    for user_id, texts in profile_texts(conn):
        scan.profiles_scanned += 1
        for kind in sorted(_kinds(texts)):
            scan.profile_user_ids.setdefault(kind, []).append(user_id)
    for action_id, texts in action_texts(conn):
        scan.actions_scanned += 1
        for kind in sorted(_kinds(texts)):
            scan.action_ids.setdefault(kind, []).append(action_id)
    return scan


def fix_secrets(conn: psycopg.Connection[Any], scan: SecretScan, *, dry_run: bool) -> RewriteCounts:
    """Re-redact everything ``scan`` found, wherever its text lives (``dry_run``: count)."""
    with conn.transaction():
        counts = rewrite_texts(
            conn,
            rescrubbed,
            memory_ids=scan.memory_ids,
            summary_ids=sorted({i for ids in scan.summary_ids.values() for i in ids}),
            user_ids=sorted({i for ids in scan.profile_user_ids.values() for i in ids}),
            session_summary_ids=sorted(
                {i for ids in scan.session_summary_ids.values() for i in ids}
            ),
            dry_run=dry_run,
        )
        action_ids = sorted({i for ids in scan.action_ids.values() for i in ids})
        actions = rewrite_actions(conn, rescrubbed, action_ids, dry_run=dry_run)
    return replace(counts, actions=len(actions))


def fix_stored_secrets(
    settings: Settings, *, dry_run: bool, scan: SecretScan | None = None
) -> RewriteCounts:
    """:func:`fix_secrets` on the configured database; scans first unless given ``scan``."""
    with open_user_connection(settings) as opened:
        counts = fix_secrets(opened.conn, scan or scan_secrets(opened.conn), dry_run=dry_run)
        opened.conn.commit()
        if counts.messages and not dry_run:
            settle_search_words(opened.conn)
            opened.conn.commit()
    return counts


def describe(counts: RewriteCounts, *, dry_run: bool) -> str:
    """``would re-redact N rows (M summaries, K profile texts)`` (``and A actions`` when
    actions hold secrets), or what was done."""
    verb = "would re-redact" if dry_run else "re-redacted"
    profile_texts = counts.profile_texts + counts.profile_history_entries
    line = (
        f"{verb} {counts.rows} rows ({counts.summaries} summaries, {profile_texts} profile texts)"
    )
    if counts.actions:
        line += f" and {counts.actions} actions"
    if not dry_run and counts.embeddings_cleared:
        line += f"; {counts.embeddings_cleared} vectors queued to be made again"
    return line
