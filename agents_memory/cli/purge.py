"""The terminal side of ``memory-capture uninstall --purge``: show what goes with its size, ask
once, delete after the uninstall (the service is :mod:`agents_memory.ops.purge`)."""

from __future__ import annotations

import click

from agents_memory.config import Settings
from agents_memory.install.installer import Installer
from agents_memory.ops import purge
from agents_memory.ops.units import human_bytes


def ask(settings: Settings, *, yes: bool, dry_run: bool) -> list[purge.Target] | None:
    """The targets, after the question (``None``: the answer was no; nothing may change)."""
    found = purge.targets(settings)
    verb = "would delete" if dry_run else "deletes"
    click.echo(f"--purge {verb}, after the uninstall:" if found else "--purge: no data here")
    for target in found:
        click.echo(f"  {target.path}  {human_bytes(target.size)}  {target.what}")
    note = purge.external_note(settings)
    if note:
        click.echo(note)
    if dry_run or yes or not found:
        return found
    if click.confirm("Delete these for good? Your memories cannot come back", default=False):
        return found
    click.echo("nothing changed")
    return None


def finish(settings: Settings, found: list[purge.Target], installer: Installer) -> None:
    """Stop the database, delete ``found``, and say what stays."""
    stopped = purge.stop_database(settings)
    if stopped:
        click.echo(stopped)
    for line in purge.remove(found, settings):
        click.echo(line)
    edited = [e.path for plan in installer.plans("uninstall") for e in plan.edits]
    kept = purge.backups_left(edited)
    if kept:
        click.echo(
            f"{len(kept)} backup(s) of your own config files, as they were before install, stay "
            "beside them (delete them when you no longer need them): "
            + ", ".join(str(p) for p in kept)
        )
    click.echo(purge.REMOVE_TOOL)
