"""Tagger: the project (p_tag) and topic keywords (d_tag) of each new row.

Project identity comes first and is deterministic: the row's ``git_root``/``git_remote``
(capture resolved worktrees to their main repository) select the project tag that owns that
repository. A repository no tag owns yet is a deterministic identity, so it becomes a confirmed
tag at once, named after the repository (a free name: ``app``, ``beta-app``, ``app-2``), and
its earlier rows are filed retroactively. No person has to confirm it; a repository whose
suggestion a person rejected (or merged away) stays untagged. Suggestions stay for what is
really uncertain: the model's ``NEW:<slug>`` for rows without git, merges and aliases.
A row without git identity but with a working directory gets the project its folder names
(:mod:`agents_memory.coldpath.folder_project`: history from another machine still has one).

The LLM only refines: it picks the keywords, and the project only for rows with no git
identity (the JS original's candidate list; ``NEW:<slug>`` becomes a suggestion, never a tag; an
unknown
name becomes ``NULL``). Without an answer from it the row gets the deterministic project and
keyword d_tags. Every claimed row ends ``tag_processed`` (or, after repeated errors, gives up).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import psycopg

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.folder_project import folder_project
from agents_memory.coldpath.replies import TaggerReply, registry_tagger_reply
from agents_memory.coldpath.text import keyword_tags, normalize_tags, slugify
from agents_memory.coldpath.units import describe, is_outage, unit_of_work
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.coldpath.tag_suggestions import NewTagSuggestion
from agents_memory.store.tags import ProjectTag, TagRow

log = logging.getLogger(__name__)

PROMPT_MESSAGE_CHARS = 2000


@dataclass(slots=True)
class _Known:
    """What one batch knows about tags and suggestions (refreshed per batch)."""

    tags: list[ProjectTag]
    candidates: list[ProjectTag]
    registry: bool
    suggestion_names: dict[str, str]
    by_name: dict[str, ProjectTag] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {t.name: t for t in self.tags}

    def refresh(self, tags: list[ProjectTag]) -> None:
        self.tags = tags
        self.by_name = {t.name: t for t in tags}


class TaggerJob(Job):
    name = "tagger"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        while True:
            with unit_of_work(ctx.conn):
                rows = tag_store.claim_untagged(ctx.conn, ctx.user_id, ctx.batch_size)
                if rows:
                    self._batch(ctx, rows, report)
            if not rows or not ctx.drain or ctx.stop_requested():
                return report
            if ctx.progress is not None:
                ctx.progress(self.name, report.processed + report.failed, 0)

    def _batch(self, ctx: JobContext, rows: list[TagRow], report: JobReport) -> None:
        conn = ctx.conn
        candidates, registry = tag_store.tagger_candidates(
            conn,
            limit=ctx.settings.tagger_candidate_limit,
            strategy=ctx.settings.tagger_candidate_strategy,
        )
        known = _Known(
            tag_store.list_project_tags(conn),
            candidates,
            registry,
            suggestion_store.new_suggestion_names(conn, ctx.user_id),
        )
        for row in rows:
            try:
                with conn.transaction():
                    p_tag_id, d_tags = self._decide(ctx, row, known, report)
                    tag_store.write_tags(conn, row.id, p_tag_id, d_tags)
                report.processed += 1
            except Exception as exc:
                if is_outage(exc):
                    raise
                log.warning("tagger: row %s failed: %s", row.id, describe(exc))
                with conn.transaction():
                    tag_store.record_tag_error(conn, row.id, describe(exc))
                report.failed += 1

    def _decide(
        self, ctx: JobContext, row: TagRow, known: _Known, report: JobReport
    ) -> tuple[int | None, list[str]]:
        has_git = bool(row.git_root or row.git_remote)
        project = tag_store.find_tag_for_git(known.tags, row.git_root, row.git_remote)
        if has_git and project is None:
            project = self._adopt_repository(ctx, row, known)
        if not has_git:
            project = self._adopt_folder(ctx, row, known)
        answer = self._ask(ctx, row, known, project, report)
        if answer is None:
            report.heuristic += 1
            return project, keyword_tags(row.message)
        d_tags = normalize_tags(answer.d_tag)
        if has_git or project is not None:
            return project, d_tags
        return self._resolve(ctx, answer.p_tag, known, row.id), d_tags

    def _ask(
        self,
        ctx: JobContext,
        row: TagRow,
        known: _Known,
        project: int | None,
        report: JobReport,
    ) -> TaggerReply | None:
        if ctx.llm is None or not ctx.llm.available:
            return None
        lines = [f"- {t.name}" for t in known.candidates] or ["(none yet)"]
        project_name = next((t.name for t in known.tags if t.id == project), None)
        if project_name:
            lines.append(f"The message was written in the repository of project {project_name}.")
        user = "\n".join(
            [
                "Candidate projects:",
                *lines,
                f"role={row.role}",
                "Message:",
                row.message[:PROMPT_MESSAGE_CHARS],
            ]
        )
        system = prompts.TAGGER_SYSTEM
        registry = tuple(t.name for t in known.candidates) if known.registry else ()
        reply = TaggerReply
        if registry:  # p_tag must be one of the registry's names
            system += "\n" + prompts.TAGGER_REGISTRY_NOTE
            reply = registry_tagger_reply(registry)
        answer = ctx.llm.complete("tagger", reply, system=system, user=user, max_tokens=200)
        if answer is not None:
            report.llm_calls += 1
        return answer

    def _resolve(self, ctx: JobContext, raw: str | None, known: _Known, row_id: int) -> int | None:
        """The model's p_tag: an existing tag (aliases resolve at read time), or ``None``.
        ``NEW:<slug>`` opens a suggestion unless the name was decided before, naming ``row_id``
        (the turn it was proposed for) among its sources."""
        if raw is None or not raw.strip():
            return None
        text = raw.strip()
        if text.upper().startswith("NEW:"):
            slug = slugify(text[4:])
            if not slug:
                return None
            if slug in known.by_name:
                return known.by_name[slug].id
            if not known.registry and slug not in known.suggestion_names:
                suggestion_store.suggest_new_tag(
                    ctx.conn, ctx.user_id, slug, members=[slug], source_id=row_id
                )
                known.suggestion_names[slug] = "pending"
            elif known.suggestion_names.get(slug) == "pending":
                suggestion_store.suggest_new_tag(ctx.conn, ctx.user_id, slug, source_id=row_id)
            return None
        tag = known.by_name.get(text.lower()) or known.by_name.get(slugify(text))
        if tag is None or (known.registry and tag not in known.candidates):
            return None
        return tag.id

    def _adopt_folder(self, ctx: JobContext, row: TagRow, known: _Known) -> int | None:
        """The project the row's working directory names (:mod:`.folder_project`'s rule):
        the existing tag of that name, or a new confirmed one; ``None`` when the folder names
        nothing or a person rejected that name."""
        name = folder_project(row.cwd)
        if name is None or known.suggestion_names.get(name) in ("rejected", "superseded"):
            return None
        tag = known.by_name.get(name)
        if tag is not None:
            return tag.id
        tag_id = tag_store.create_project_tag(ctx.conn, name)
        known.refresh(tag_store.list_project_tags(ctx.conn))
        log.info("tagger: new project tag %s for the folder %s", name, row.cwd)
        return tag_id

    def _adopt_repository(self, ctx: JobContext, row: TagRow, known: _Known) -> int | None:
        return adopt_repository(ctx.conn, ctx.user_id, row, known)


def tag_now(conn: psycopg.Connection[Any], user_id: int, memory_id: int, *, final: bool) -> bool:
    """The tagger's heuristic for one row, at once (``manage_knowledge`` tags what it stores
    in the same call): the project of its repository (a new repository's tag made as the
    tagger makes it) and keyword d_tags. ``final``: no model will refine them (the row is
    done); otherwise the row stays queued and the Cold Path's tagger asks the model. False
    when there is no such row."""
    row = tag_store.tag_row(conn, memory_id)
    if row is None:
        return False
    known = _Known(
        tag_store.list_project_tags(conn),
        [],
        False,
        suggestion_store.new_suggestion_names(conn, user_id),
    )
    project = tag_store.find_tag_for_git(known.tags, row.git_root, row.git_remote)
    if project is None and (row.git_root or row.git_remote):
        project = adopt_repository(conn, user_id, row, known)
    tag_store.write_tags(conn, row.id, project, keyword_tags(row.message), processed=final)
    return True


def adopt_repository(
    conn: psycopg.Connection[Any], user_id: int, row: TagRow, known: _Known
) -> int | None:
    """Create the confirmed tag of a repository no tag owns and file its earlier rows;
    ``None`` when a person rejected (or merged away) this repository's suggestion. A
    suggestion still pending from an older version is confirmed with its name."""
    existing: NewTagSuggestion | None = suggestion_store.git_suggestion_for(
        conn, user_id, row.git_root, row.git_remote
    )
    if existing is not None and existing.status in ("rejected", "superseded"):
        return None
    name = (
        existing.name
        if existing is not None
        else _free_name(_repository_names(row.git_root, row.git_remote), known)
    )
    if name is None:
        return None
    tag_id = tag_store.create_project_tag(
        conn, name, git_root=row.git_root, git_remote=row.git_remote
    )
    filed = tag_store.retro_tag_git(conn, tag_id, row.git_root, row.git_remote)
    if existing is not None and existing.status == "pending":
        suggestion_store.decide_new_suggestion(
            conn,
            existing.id,
            "confirmed",
            decided_by="system",
            reason="a git repository is a project",
            project_tag_id=tag_id,
            retrotagged=filed,
        )
    known.refresh(tag_store.list_project_tags(conn))
    log.info("tagger: new project tag %s for %s", name, row.git_remote or row.git_root)
    return tag_store.find_tag_for_git(known.tags, row.git_root, row.git_remote) or tag_id


def _repository_names(git_root: str | None, git_remote: str | None) -> list[str]:
    """Names to try for a repository, best first: its directory (or the remote's last path
    part), then prefixed with its parent directory or owner."""
    parts: list[str] = []
    if git_root:
        parts = list(PurePosixPath(git_root).parts[1:])
    else:
        key = tag_store.remote_key(git_remote) or ""
        parts = key.split("/")[1:]
    parts = [p for p in (slugify(part) for part in parts) if p]
    if not parts:
        return []
    names = [parts[-1]]
    if len(parts) >= 2:
        names.append(slugify(f"{parts[-2]}-{parts[-1]}"))
    names.extend(f"{parts[-1]}-{n}" for n in range(2, 10))
    return names


def _free_name(names: list[str], known: _Known) -> str | None:
    """The first name that neither a tag that owns another repository nor any earlier
    suggestion holds (a tag of that name without git identity may take the repo on confirm)."""
    for name in names:
        tag = known.by_name.get(name)
        if tag is not None and (tag.git_root or tag.git_remote):
            continue
        if name in known.suggestion_names:
            continue
        return name
    return None
