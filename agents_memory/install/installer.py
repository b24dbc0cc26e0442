"""``memory-capture install`` / ``uninstall``: apply the adapters' plans, and the systemd units.

One function applies every plan (:meth:`Installer.run`): it renders each file edit against the
file's current text (:mod:`agents_memory.install.edits`), shows diffs for ``--dry-run``, and
otherwise backs up and writes (:mod:`agents_memory.install.fileio`). A client whose config file
is malformed is skipped with a one-line error; the others proceed. Then each adapter's own
step (:meth:`~agents_memory.adapters.base.Adapter.post_install` or ``post_uninstall``, given an
:class:`~agents_memory.adapters.base.InstallContext` to write through) and the user units
(:mod:`agents_memory.install.services`). No client is named here: what differs per client is
the adapter's.

Everything that reaches outside the home directory is injected: the ``systemctl`` runner and
the PATH lookup used to detect clients (and handed to the adapters' steps).
"""

from __future__ import annotations

import difflib
import logging
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from agents_memory.adapters import all_adapters, get_adapter
from agents_memory.adapters.base import (
    Adapter,
    Commands,
    FileEdit,
    InstallContext,
    InstallPlan,
    OwnedEntry,
    TextBlock,
)
from agents_memory.errors import AgentsMemoryError, ConfigFileError
from agents_memory.install import launchd, services
from agents_memory.install.edits import (
    Record,
    present_entries,
    refresh_block,
    render_install,
    render_uninstall,
)
from agents_memory.install.fileio import Backups, Manifest, read_text, write_atomic

log = logging.getLogger(__name__)

Action = Literal["install", "uninstall"]
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
    supervisor: str | None = None
    """What runs the daemon after an install: ``systemd``, ``launchd``, ``daemon`` (our own,
    ``memory-capture start``) or ``None`` (nothing was started)."""

    @property
    def changes(self) -> list[Change]:
        return [c for client in self.clients for c in client.changes if c.changed]

    @property
    def errors(self) -> list[str]:
        return [f"{c.platform}: {c.error}" for c in self.clients if c.error]


class DaemonControl(Protocol):
    """Starts and stops the capture daemon without a service manager (``memory-capture
    start|stop``); each returns lines for the user."""

    def start(self) -> list[str]: ...

    def stop(self) -> list[str]: ...


@dataclass(slots=True)
class Installer:
    """Applies plans under ``home``. ``systemctl`` is ``None`` where there is no systemd;
    ``which`` finds the clients (and the tools their post-install steps run) on PATH.

    ``prepare`` runs after the confirmation and before any file is written (the CLI creates
    the database and imports existing history there); ``daemon`` starts the capture daemon
    where neither systemd nor launchd (``launchctl``, on ``platform`` darwin) can."""

    home: Path
    commands: Commands
    state_dir: Path
    systemctl: services.SystemctlRunner | None = None
    cold_path: bool = True
    which: Callable[[str], str | None] = shutil.which
    platform: str = sys.platform
    launchctl: services.SystemctlRunner | None = None
    prepare: Callable[[], list[str]] | None = None
    daemon: DaemonControl | None = None
    stamp: str = field(default_factory=lambda: datetime.now().strftime("%Y%m%dT%H%M%S"))
    _systemd: bool | None = field(default=None, init=False, repr=False)

    def systemd_usable(self) -> bool:
        """Whether a user systemd answers here (``systemctl --user show-environment``; asked
        once): ``systemctl`` on PATH is not enough in containers and sessions without one."""
        if self._systemd is None:
            runner = self.systemctl
            self._systemd = runner is not None and runner(["show-environment"]) == 0
        return self._systemd

    # --- what to touch -----------------------------------------------------------------------

    def detect(self) -> list[str]:
        """Clients installed here: a config directory exists or a binary is on PATH."""
        return [a.name for a in all_adapters() if self._present(a)]

    def _present(self, adapter: Adapter) -> bool:
        if any(p.exists() for p in adapter.config_markers(self.home)):
            return True
        return any(self.which(b) for b in adapter.binaries)

    def adapters(self, action: Action, platforms: Iterable[str] = ()) -> list[Adapter]:
        """The clients to act on: those named, else (install) the detected or (uninstall) all."""
        chosen = list(platforms)
        if chosen:
            return [get_adapter(name) for name in chosen]
        return [a for a in all_adapters() if action == "uninstall" or self._present(a)]

    def plans(
        self, action: Action, platforms: Iterable[str] = (), adapters: list[Adapter] | None = None
    ) -> list[InstallPlan]:
        """The chosen clients' (or ``adapters``') plans, then the units' plan (install with
        systemd; a full uninstall)."""
        platforms = tuple(platforms)
        chosen = self.adapters(action, platforms) if adapters is None else adapters
        plans = [a.install_plan(self.home, self.commands) for a in chosen]
        if action == "install" and self.systemd_usable():
            plans.append(services.unit_plan(self.home, self.commands, cold_path=self.cold_path))
        elif action == "install" and self.platform == "darwin":
            plans.append(launchd.agent_plan(self.home, self.commands, self.state_dir))
        elif action == "uninstall" and not platforms:
            plans.append(services.removal_plan(self.home))
            plans.append(launchd.removal_plan(self.home))
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
        chosen = self.adapters(action, platforms)
        adapters = {a.name: a for a in chosen}
        for plan in self.plans(action, platforms, chosen):
            report.clients.append(self._render(plan, action, manifest, adapters.get(plan.platform)))
        if dry_run:
            report.notes.extend(self._dry_run_notes(action, chosen))
            return report
        if confirm is not None and report.changes and not confirm(report):
            report.clients = [ClientOutcome(c.platform, error=c.error) for c in report.clients]
            report.notes.append("nothing changed")
            return report
        if action == "uninstall" and not platforms:
            report.notes.extend(self._stop_services())
        if action == "install" and self.prepare is not None:
            report.notes.extend(self.prepare())
        backups = Backups(self.stamp)
        for client in report.clients:
            self._apply(client.changes, manifest, backups, action)
        for client in report.clients:
            adapter = adapters.get(client.platform)
            if adapter is not None and client.error is None:
                ctx = self._context(client, manifest, backups)
                step = adapter.post_install if action == "install" else adapter.post_uninstall
                client.notes.extend(step(ctx))
        if action == "install":
            report.notes.extend(self._start_services(report))
        elif (
            not platforms
            and self.systemctl is not None
            and any(c.platform == services.PLATFORM for c in report.changes)
            and self.systemd_usable()
        ):
            services.reload(self.systemctl)
        manifest.save()
        report.backups = list(backups.made.values())
        return report

    def _render(
        self, plan: InstallPlan, action: Action, manifest: Manifest, adapter: Adapter | None
    ) -> ClientOutcome:
        # A plan's notes are about installing it (uninstall reports what its own step did).
        notes = list(plan.notes) if action == "install" else []
        outcome = ClientOutcome(plan.platform, notes=notes)
        try:
            for edit in self._edits(plan, action, adapter):
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

    def _edits(self, plan: InstallPlan, action: Action, adapter: Adapter | None) -> list[FileEdit]:
        """The plan's edits, one per file; for an uninstall also the adapter's own (what its
        post-install step added, as it is now)."""
        edits = list(plan.edits)
        if action == "uninstall" and adapter is not None:
            edits.extend(adapter.uninstall_edits(self.home, read_text))
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
                if not manifest.get(change.path).created_file:  # ours alone: nothing to keep
                    backups.before_change(change.path)
                write_atomic(change.path, change.after)
            if action == "install":
                if change.changed or change.record.created_keys or change.record.owned_keys:
                    manifest.add(change.path, change.record)
            else:
                manifest.forget(change.path)

    # --- follow-ups ---------------------------------------------------------------------------

    def _context(
        self, client: ClientOutcome, manifest: Manifest, backups: Backups
    ) -> InstallContext:
        """What an adapter's post-install step writes through: each edit rendered, backed up,
        written, recorded as ours and shown among ``client``'s changes."""

        def apply(edit: FileEdit) -> None:
            before = read_text(edit.path)
            rendered = render_install(edit, before)
            rendered.record.owned_keys |= {
                entry.path for entry in edit.entries if isinstance(entry, OwnedEntry)
            }
            change = Change(client.platform, edit.path, edit.summary, before, *rendered.parts())
            self._apply([change], manifest, backups, "install")
            client.changes.append(change)

        return InstallContext(self.home, False, self.which, read_text, apply, self.commands)

    def _start_services(self, report: Report) -> list[str]:
        if not self.systemd_usable():
            agent = launchd.agent_path(self.home)
            if self.launchctl is not None and agent.exists():
                self.launchctl(["load", "-w", str(agent)])
                report.supervisor = "launchd"
                return [f"loaded the launchd agent {launchd.LABEL} (it starts at login)"]
            if self.daemon is not None:
                report.supervisor = "daemon"
                return self.daemon.start()
            return [services.how_to_run(self.commands, self.state_dir)]
        assert self.systemctl is not None
        report.supervisor = "systemd"
        units = [c for c in report.changes if c.platform == services.PLATFORM]
        coldpath = services.unit_dir(self.home) / services.COLDPATH_UNIT
        return services.start(
            self.systemctl,
            units_changed=bool(units),
            coldpath_written=self.cold_path and coldpath.exists(),
        )

    def _stop_services(self) -> list[str]:
        notes: list[str] = []
        agent = launchd.agent_path(self.home)
        if self.launchctl is not None and agent.exists():
            status = self.launchctl(["unload", "-w", str(agent)])
            notes.append(
                f"unloaded the launchd agent {launchd.LABEL}"
                if status == 0
                else f"launchctl could not unload {launchd.LABEL} (exit {status})"
            )
        notes.extend(self._stop_units())
        if self.daemon is not None:
            notes.extend(self.daemon.stop())
        return notes

    def _stop_units(self) -> list[str]:
        directory = services.unit_dir(self.home)
        present = [
            name
            for name in (services.CAPTURE_UNIT, services.COLDPATH_UNIT)
            if (directory / name).exists()
        ]
        if not present:
            return []
        if self.systemctl is None or not self.systemd_usable():
            return [
                "no systemd user session here, so no unit was running: "
                f"only the unit files go ({', '.join(present)})"
            ]
        return services.stop(self.systemctl, present)

    def _dry_run_notes(self, action: Action, adapters: list[Adapter]) -> list[str]:
        notes = ["dry run: nothing was written"]
        ctx = InstallContext(self.home, True, self.which, read_text, _no_writes, self.commands)
        if action == "uninstall":
            for adapter in adapters:
                notes.extend(adapter.post_uninstall(ctx))
        if action == "install":
            for adapter in adapters:
                notes.extend(adapter.post_install(ctx))
            if not self.systemd_usable():
                notes.append(
                    "would start the capture daemon (`memory-capture start`)"
                    if self.daemon is not None
                    else services.how_to_run(self.commands, self.state_dir)
                )
            else:
                notes.append(f"would run `systemctl --user enable --now {services.CAPTURE_UNIT}`")
        return notes


def _no_writes(edit: FileEdit) -> None:
    raise OSError(f"a dry run writes nothing ({edit.path})")


# --- for status and the daemon -------------------------------------------------------------------


def _shown(home: Path, path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def installed_entries(home: Path) -> dict[str, list[str]]:
    """Per platform (and ``systemd``), our entries present under ``home``, e.g.
    ``"~/.<client>/settings.json: SessionStart hook"``, and the extras the adapter reports; an
    empty list when none."""
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
        extras = adapter.installed_extras(home, read_text)
        entries.extend(f"{_shown(home, path)}: {what}" for path, what in extras)
        found[adapter.name] = entries
    directory = services.unit_dir(home)
    found[services.PLATFORM] = [
        f"{_shown(home, directory / name)}: unit file"
        for name in (services.CAPTURE_UNIT, services.COLDPATH_UNIT)
        if (directory / name).exists()
    ]
    return found


def refresh_context_blocks(home: Path, brief_text: str) -> list[Path]:
    """Rewrite the content between our markers in the installed context files (the plans'
    ``text-block`` edits), atomically; files without our block are left alone. Returns the
    files that changed."""
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
