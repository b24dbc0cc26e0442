"""``memory-capture install`` / ``uninstall``: apply the adapters' plans, and the systemd units.

One function applies every plan (:meth:`Installer.run`): it renders each file edit against the
file's current text (:mod:`agents_memory.install.edits`), shows diffs for ``--dry-run``, and
otherwise backs up and writes (:mod:`agents_memory.install.fileio`). A client whose config file
is malformed is skipped with a one-line error; the others proceed. Then the follow-ups: Codex
hook trust (:mod:`agents_memory.install.codex_trust`) and the user units
(:mod:`agents_memory.install.services`).

Everything that reaches outside the home directory is injected: the ``systemctl`` runner, the
Codex hook lister, the PATH lookup used to detect clients.
"""

from __future__ import annotations

import difflib
import json
import logging
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agents_memory.adapters import all_adapters, get_adapter
from agents_memory.adapters.base import (
    Adapter,
    Commands,
    FileEdit,
    InstallPlan,
    OwnedEntry,
    TextBlock,
)
from agents_memory.errors import AgentsMemoryError
from agents_memory.install import codex_trust, services
from agents_memory.install.edits import (
    ConfigFileError,
    Record,
    present_entries,
    refresh_block,
    render_install,
    render_uninstall,
)
from agents_memory.install.fileio import Backups, Manifest, read_text, write_atomic

log = logging.getLogger(__name__)

Action = Literal["install", "uninstall"]
CODEX_TRUST = "codex-hook-trust"
_PLACEHOLDER_COMMANDS = Commands(Path("memory-capture"), Path("mcp-agents-memory"))


def resolve_commands(which: Callable[[str], str | None] = shutil.which) -> Commands:
    """Absolute paths of ``memory-capture`` and ``mcp-agents-memory``: beside the running
    interpreter (the venv or pipx bin dir) first, then on ``PATH``."""
    found = []
    for name in ("memory-capture", "mcp-agents-memory"):
        beside = Path(sys.executable).parent / name
        path = str(beside) if beside.is_file() else which(name)
        if path is None:
            raise AgentsMemoryError(
                f"cannot find the `{name}` script beside {sys.executable} or on PATH; "
                "install the package (pip/pipx) before running `memory-capture install`"
            )
        found.append(Path(path).absolute())
    return Commands(found[0], found[1])


@dataclass(slots=True)
class Change:
    """One file: its text before and after (``None`` = absent / deleted)."""

    platform: str
    path: Path
    summary: str
    before: str | None
    after: str | None
    record: Record

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(slots=True)
class ClientOutcome:
    platform: str
    changes: list[Change] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    action: Action
    dry_run: bool
    clients: list[ClientOutcome] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changes(self) -> list[Change]:
        return [c for client in self.clients for c in client.changes if c.changed]

    @property
    def errors(self) -> list[str]:
        return [f"{c.platform}: {c.error}" for c in self.clients if c.error]


@dataclass(slots=True)
class Installer:
    """Applies plans under ``home``. ``systemctl`` is ``None`` where there is no systemd;
    ``codex_lister`` is ``None`` where ``codex`` is not on PATH."""

    home: Path
    commands: Commands
    state_dir: Path
    systemctl: services.SystemctlRunner | None = None
    codex_lister: codex_trust.HookLister | None = None
    cold_path: bool = True
    which: Callable[[str], str | None] = shutil.which
    stamp: str = field(default_factory=lambda: datetime.now().strftime("%Y%m%dT%H%M%S"))

    # --- what to touch -----------------------------------------------------------------------

    def detect(self) -> list[str]:
        """Clients installed here: a config directory exists or a binary is on PATH."""
        return [a.name for a in all_adapters() if self._present(a)]

    def _present(self, adapter: Adapter) -> bool:
        if any(p.exists() for p in adapter.config_markers(self.home)):
            return True
        return any(self.which(b) for b in adapter.binaries)

    def plans(self, action: Action, platforms: Iterable[str] = ()) -> list[InstallPlan]:
        chosen = list(platforms)
        if not chosen:
            chosen = self.detect() if action == "install" else [a.name for a in all_adapters()]
        plans = [get_adapter(name).install_plan(self.home, self.commands) for name in chosen]
        if action == "install" and self.systemctl is not None:
            plans.append(services.unit_plan(self.home, self.commands, cold_path=self.cold_path))
        elif action == "uninstall" and not list(platforms):
            plans.append(services.removal_plan(self.home))
        return plans

    # --- the one applier -----------------------------------------------------------------------

    def run(
        self,
        action: Action,
        platforms: Iterable[str] = (),
        *,
        dry_run: bool = False,
        confirm: Callable[[Report], bool] | None = None,
    ) -> Report:
        """Plan, render, (confirm,) write, then the follow-ups. ``confirm`` sees the rendered
        report before anything is written; returning ``False`` writes nothing."""
        platforms = tuple(platforms)
        manifest = Manifest.load(self.state_dir)
        report = Report(action, dry_run)
        plans = self.plans(action, platforms)
        for plan in plans:
            report.clients.append(self._render(plan, action, manifest))
        if dry_run:
            report.notes.extend(self._dry_run_notes(action, plans))
            return report
        if confirm is not None and report.changes and not confirm(report):
            report.clients = [ClientOutcome(c.platform, error=c.error) for c in report.clients]
            report.notes.append("nothing changed")
            return report
        if action == "uninstall" and not platforms:
            report.notes.extend(self._stop_services())
        backups = Backups(self.stamp)
        for client in report.clients:
            self._apply(client.changes, manifest, backups, action)
        if action == "install":
            for plan, client in zip(plans, report.clients, strict=True):
                if CODEX_TRUST in plan.followups and client.error is None:
                    client.notes.extend(self._trust_codex(client, manifest, backups))
            report.notes.extend(self._start_services(report))
        elif not platforms and self.systemctl is not None and report.changes:
            services.reload(self.systemctl)
        manifest.save()
        report.backups = list(backups.made.values())
        return report

    def _render(self, plan: InstallPlan, action: Action, manifest: Manifest) -> ClientOutcome:
        outcome = ClientOutcome(plan.platform, notes=list(plan.notes))
        try:
            for edit in self._edits(plan, action, manifest):
                before = read_text(edit.path)
                if action == "install":
                    rendered = render_install(edit, before)
                else:
                    rendered = render_uninstall(edit, before, manifest.get(edit.path))
                outcome.changes.append(
                    Change(
                        plan.platform,
                        edit.path,
                        edit.summary,
                        before,
                        rendered.text,
                        rendered.record,
                    )
                )
        except ConfigFileError as exc:
            outcome.changes.clear()
            outcome.error = f"{exc}; skipped, nothing written for this client"
        return outcome

    def _edits(self, plan: InstallPlan, action: Action, manifest: Manifest) -> list[FileEdit]:
        """The plan's edits, one per file; for a Codex uninstall also the trust entries of our
        hooks at their current positions."""
        edits = list(plan.edits)
        if action == "uninstall" and CODEX_TRUST in plan.followups:
            hooks_json = self.home / ".codex" / "hooks.json"
            text = read_text(hooks_json)
            try:
                data = json.loads(text) if text else {}
            except ValueError as exc:
                raise ConfigFileError(f"{hooks_json}: not valid JSON ({exc})") from exc
            keys = codex_trust.hook_keys(hooks_json, data, resolved_too=True)
            entries = tuple(OwnedEntry(("hooks", "state", k), {}) for k in keys)
            edits.append(FileEdit(self.home / ".codex" / "config.toml", "toml", entries))
        merged: dict[Path, FileEdit] = {}
        for edit in edits:
            first = merged.get(edit.path)
            merged[edit.path] = (
                edit
                if first is None
                else FileEdit(edit.path, first.format, first.entries + edit.entries, first.summary)
            )
        return list(merged.values())

    def _apply(
        self, changes: list[Change], manifest: Manifest, backups: Backups, action: Action
    ) -> None:
        for change in changes:
            if change.changed:
                backups.before_change(change.path)
                write_atomic(change.path, change.after)
            if action == "install":
                if change.changed or change.record.created_keys or change.record.owned_keys:
                    manifest.add(change.path, change.record)
            else:
                manifest.forget(change.path)

    # --- follow-ups ---------------------------------------------------------------------------

    def _trust_codex(
        self, client: ClientOutcome, manifest: Manifest, backups: Backups
    ) -> list[str]:
        codex_home = self.home / ".codex"
        hooks_json, config = codex_home / "hooks.json", codex_home / "config.toml"
        if self.codex_lister is None:
            return [] if _codex_trust_entry(self.home) else [codex_trust.TRUST_INSTRUCTION]
        try:
            listed = self.codex_lister(codex_home, self.home)
            todo = codex_trust.untrusted_ours(listed, hooks_json)
            edit = codex_trust.trust_edit(config, todo)
            if edit is None:
                return self._trust_check(listed, hooks_json)
            before = read_text(config)
            rendered = render_install(edit, before)
            rendered.record.owned_keys |= {
                entry.path for entry in edit.entries if isinstance(entry, OwnedEntry)
            }
            change = Change("codex-cli", config, "hook trust", before, *rendered.parts())
            self._apply([change], manifest, backups, "install")
            client.changes.append(change)
            remaining = codex_trust.untrusted_ours(
                self.codex_lister(codex_home, self.home), hooks_json
            )
        except (codex_trust.CodexRpcError, OSError, ConfigFileError) as exc:
            return [f"could not record Codex hook trust ({exc}). {codex_trust.TRUST_INSTRUCTION}"]
        if remaining:
            return [
                f"Codex still reports {len(remaining)} hook(s) untrusted. "
                + codex_trust.TRUST_INSTRUCTION
            ]
        return [f"trusted {len(todo)} Codex hook(s) (verified with `codex app-server`)"]

    def _trust_check(self, listed: list[dict[str, Any]], hooks_json: Path) -> list[str]:
        if codex_trust.listed_ours(listed, hooks_json):
            return []
        return [
            f"Codex does not list the hooks in {hooks_json}; are hooks enabled "
            "(`[features] hooks = true` in ~/.codex/config.toml)?"
        ]

    def _start_services(self, report: Report) -> list[str]:
        if self.systemctl is None or self.systemctl(["show-environment"]) != 0:
            return [services.how_to_run(self.commands, self.state_dir)]
        units = [c for c in report.changes if c.platform == services.PLATFORM]
        coldpath = services.unit_dir(self.home) / services.COLDPATH_UNIT
        return services.start(
            self.systemctl,
            units_changed=bool(units),
            coldpath_written=self.cold_path and coldpath.exists(),
        )

    def _stop_services(self) -> list[str]:
        if self.systemctl is None:
            return []
        directory = services.unit_dir(self.home)
        present = [
            name
            for name in (services.CAPTURE_UNIT, services.COLDPATH_UNIT)
            if (directory / name).exists()
        ]
        return services.stop(self.systemctl, present)

    def _dry_run_notes(self, action: Action, plans: list[InstallPlan]) -> list[str]:
        notes = ["dry run: nothing was written"]
        if action == "install":
            if any(CODEX_TRUST in p.followups for p in plans):
                notes.append(
                    "would ask `codex app-server` for the new hooks' hashes and trust them"
                    if self.codex_lister is not None
                    else codex_trust.TRUST_INSTRUCTION
                )
            if self.systemctl is None:
                notes.append(services.how_to_run(self.commands, self.state_dir))
            else:
                notes.append(f"would run `systemctl --user enable --now {services.CAPTURE_UNIT}`")
        return notes


# --- for status and the daemon -------------------------------------------------------------------


def _shown(home: Path, path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def installed_entries(home: Path) -> dict[str, list[str]]:
    """Per platform (and ``systemd``), our entries present under ``home``, e.g.
    ``"~/.claude/settings.json: SessionStart hook"``; an empty list when none."""
    found: dict[str, list[str]] = {}
    for adapter in all_adapters():
        entries: list[str] = []
        for edit in adapter.install_plan(home, _PLACEHOLDER_COMMANDS).edits:
            try:
                text = read_text(edit.path)
                names = present_entries(edit, text) if text is not None else []
            except ConfigFileError:
                entries.append(f"{_shown(home, edit.path)}: unreadable")
                continue
            entries.extend(f"{_shown(home, edit.path)}: {name}" for name in names)
        if adapter.name == "codex-cli":
            entries.extend(_codex_trust_entry(home))
        found[adapter.name] = entries
    directory = services.unit_dir(home)
    found[services.PLATFORM] = [
        f"{_shown(home, directory / name)}: unit file"
        for name in (services.CAPTURE_UNIT, services.COLDPATH_UNIT)
        if (directory / name).exists()
    ]
    return found


def _codex_trust_entry(home: Path) -> list[str]:
    hooks_json, config = home / ".codex" / "hooks.json", home / ".codex" / "config.toml"
    try:
        text = read_text(hooks_json)
        keys = codex_trust.hook_keys(hooks_json, json.loads(text) if text else {})
        trusted = codex_trust.has_trust_entries(read_text(config), keys)
    except (ConfigFileError, ValueError):
        return []
    return [f"{_shown(home, config)}: hook trust"] if trusted else []


def refresh_context_blocks(home: Path, brief_text: str) -> list[Path]:
    """Rewrite the content between our markers in the installed Grok/Antigravity context files
    (atomically; files without our block are left alone). Returns the files that changed."""
    changed: list[Path] = []
    for adapter in all_adapters():
        for edit in adapter.install_plan(home, _PLACEHOLDER_COMMANDS).edits:
            if edit.format != "text-block" or not any(
                isinstance(e, TextBlock) for e in edit.entries
            ):
                continue
            try:
                text = read_text(edit.path)
                if text is None:
                    continue
                new = refresh_block(text, brief_text)
                if new != text:
                    write_atomic(edit.path, new)
                    changed.append(edit.path)
            except (ConfigFileError, OSError) as exc:
                log.warning("cannot refresh the memory block in %s: %s", edit.path, exc)
    return changed
