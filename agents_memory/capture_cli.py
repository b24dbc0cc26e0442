"""``memory-capture``: the workstation side — capture daemon, backfill, status."""

from __future__ import annotations

import sys

import click

from agents_memory import __version__
from agents_memory.cli_common import configure_logging, debug_option, run_main
from agents_memory.config import load_settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memory-capture")
@debug_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Capture every turn your coding agents write to their transcripts into shared memory."""
    settings = load_settings()
    configure_logging("DEBUG" if "--debug" in sys.argv else settings.log_level)
    ctx.obj = settings


def main() -> None:
    run_main(cli)


if __name__ == "__main__":
    main()
