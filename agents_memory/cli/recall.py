"""``mcp-agents-memory recall on|off|status [DIR]`` and ``memory on|off|status [DIR]``: the
per-project switches of per-prompt recall and of the whole of memory, marker files committed in
the repository (:mod:`agents_memory.admission.project_switch`)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from agents_memory.cli.common import settings_from

_DIR = click.argument(
    "directory",
    required=False,
    default=".",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)


@click.group()
def recall() -> None:
    """Per-prompt recall for one project: turn it off or on, or see whether it is on.

    The switch is a file, .agents-memory/no-prompt-recall, at the root of the repository that
    holds DIRECTORY (default: the current one); commit it to turn recall off for everyone who
    works on the project. PROMPT_RECALL=off turns it off everywhere.
    """


@recall.command("off")
@_DIR
def recall_off(directory: Path) -> None:
    """Add no memories to prompts in DIRECTORY's project (writes the marker file)."""
    from agents_memory.recall.prompt_switch import set_project_switch

    change = set_project_switch(directory, on=False)
    verb = "wrote" if change.changed else "already there:"
    click.echo(f"per-prompt recall is off for this project ({verb} {change.marker})")


@recall.command("on")
@_DIR
def recall_on(directory: Path) -> None:
    """Add memories to prompts in DIRECTORY's project again (removes the marker file)."""
    from agents_memory.recall.prompt_switch import set_project_switch

    change = set_project_switch(directory, on=True)
    done = f"removed {change.marker}" if change.changed else "no marker file was there"
    click.echo(f"per-prompt recall is on for this project ({done})")
    _say_if_globally_off(click.get_current_context())


@recall.command("status")
@_DIR
def recall_status(directory: Path) -> None:
    """Whether prompts in DIRECTORY's project get memories, and which switch says not."""
    from agents_memory.admission.project_switch import memory_off
    from agents_memory.recall.prompt_switch import find_marker

    marker = memory_off(directory.resolve()) or find_marker(directory.resolve())
    if marker is not None:
        click.echo(f"per-prompt recall is off for this project ({marker})")
    elif not _say_if_globally_off(click.get_current_context()):
        click.echo("per-prompt recall is on for this project")


def _say_if_globally_off(ctx: click.Context) -> bool:
    if settings_from(ctx).prompt_recall:
        return False
    click.echo("per-prompt recall is off everywhere (PROMPT_RECALL=off)")
    return True


@click.group()
def memory() -> None:
    """Memory for one project: turn it off or on, or see whether it is on.

    The switch is a file, .agents-memory/no-memory, at the root of the repository that holds
    DIRECTORY (default: the current one); commit it to opt the project out for everyone who
    works on it: its turns and actions are not captured, its sessions get no brief, its prompts
    no memories. Turns stored before stay (forget --project removes them).
    """


@memory.command("off")
@_DIR
def memory_off_cmd(directory: Path) -> None:
    """Store and recall nothing of DIRECTORY's project (writes the marker file)."""
    from agents_memory.admission.project_switch import NO_MEMORY, NO_MEMORY_TEXT, set_switch

    change = set_switch(directory, NO_MEMORY, NO_MEMORY_TEXT, on=False)
    verb = "wrote" if change.changed else "already there:"
    click.echo(f"memory is off for this project ({verb} {change.marker})")
    root = change.marker.parent.parent
    click.echo(
        "turns stored before stay; to remove them: "
        f"mcp-agents-memory forget --project {shlex.quote(str(root))}"
    )


@memory.command("on")
@_DIR
def memory_on_cmd(directory: Path) -> None:
    """Capture and recall DIRECTORY's project again (removes the marker file)."""
    from agents_memory.admission.project_switch import NO_MEMORY, NO_MEMORY_TEXT, set_switch

    change = set_switch(directory, NO_MEMORY, NO_MEMORY_TEXT, on=True)
    done = f"removed {change.marker}" if change.changed else "no marker file was there"
    click.echo(f"memory is on for this project ({done})")


@memory.command("status")
@_DIR
def memory_status_cmd(directory: Path) -> None:
    """Whether DIRECTORY's project is remembered, and the marker that says not."""
    from agents_memory.admission.project_switch import memory_off

    marker = memory_off(directory.resolve())
    if marker is not None:
        click.echo(f"memory is off for this project ({marker})")
    else:
        click.echo("memory is on for this project")
