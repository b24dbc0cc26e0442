"""What both console scripts share: error handling, logging set-up, settings loading, and the
group class that points a verb typed to the wrong script at the script that has it."""

from __future__ import annotations

import difflib
import importlib
import logging
import shlex
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import click

from agents_memory.config import Settings, configured_secrets, load_settings
from agents_memory.errors import AgentsMemoryError, first_line
from agents_memory.masking import MaskingFilter, mask

_DEBUG_FLAG = "--debug"

SCRIPT_MODULES = {
    "memory-capture": "agents_memory.cli.capture",
    "mcp-agents-memory": "agents_memory.cli.memory",
}
"""Each console script and the module whose ``cli`` group it runs."""


class ScriptGroup(click.Group):
    """The top group of one console script. An unknown verb that the other script has (or
    nearly has, for a typo) fails with a usage error naming that script, exit 2."""

    def __init__(self, *args: Any, script: str, **kwargs: Any) -> None:
        if script not in SCRIPT_MODULES:
            raise ValueError(f"unknown console script {script!r}")
        super().__init__(*args, **kwargs)
        self.script = script
        self.lazy: dict[str, str] = {}
        """Commands imported when first asked for: name -> ``module:attribute``. A command
        line pays only for its own command's imports (``search`` does not import the
        redactor that ``import`` needs)."""

    def add_lazy(self, name: str, target: str) -> None:
        self.lazy[name] = target

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command by name, the lazy ones imported (help, docs, hints)."""
        ctx = click.Context(self)
        found = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
        return {name: command for name, command in found.items() if command is not None}

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            hint = self._other_script_hint(name, args[1:])
            if hint is not None and not ctx.resilient_parsing:
                raise click.UsageError(hint, ctx)
        return super().resolve_command(ctx, args)

    def _other_script_hint(self, name: str, rest: list[str]) -> str | None:
        own = set(self._visible_commands())
        for other, module in SCRIPT_MODULES.items():
            if other == self.script:
                continue
            group = importlib.import_module(module).cli
            assert isinstance(group, ScriptGroup)
            theirs = [n for n in group._visible_commands() if n not in own]
            if name in theirs:
                line = shlex.join([other, name, *rest])
                return f"`{name}` is a `{other}` command: run `{line}`"
            close = difflib.get_close_matches(name, theirs, n=1, cutoff=0.8)
            if close and not difflib.get_close_matches(name, own, n=1, cutoff=0.8):
                line = shlex.join([other, close[0], *rest])
                return f"no command `{name}`; `{close[0]}` is a `{other}` command: run `{line}`"
        return None

    def _visible_commands(self) -> list[str]:
        return [name for name, command in self.all_commands().items() if not command.hidden]


def configure_logging(level: str, secrets: Iterable[str] = ()) -> None:
    """Handlers configured once per entry point, to stderr (journald under systemd); every
    record is masked of the configured ``secrets`` (:mod:`agents_memory.masking`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskingFilter(secrets))
    logging.basicConfig(level=getattr(logging, level, logging.INFO), handlers=[handler])
    # watchdog logs every inotify event at DEBUG: with the log written inside a watched
    # folder that is an endless feedback loop, and it drowns our own debug lines anyway.
    logging.getLogger("watchdog").setLevel(logging.INFO)


def settings_from(ctx: click.Context) -> Settings:
    """The settings loaded once by the group callback."""
    settings = ctx.find_object(Settings)
    if settings is None:
        settings = load_settings()
        ctx.obj = settings
    return settings


def run_main(group: click.Group, argv: list[str] | None = None) -> NoReturn:
    """Run ``group`` and exit with its code (a command's ``ctx.exit(1)`` included). Any error
    becomes one line on stderr and exit 1 (``--debug`` anywhere on the command line shows the
    traceback instead); both are masked of configured passwords and tokens."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _DEBUG_FLAG in args
    try:
        code = group.main(args=args, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        _fail(exc, debug)
    # click returns a command's ctx.exit(code) as the result in non-standalone mode.
    sys.exit(code if isinstance(code, int) and not isinstance(code, bool) else 0)


def _fail(exc: Exception, debug: bool) -> NoReturn:
    secrets = configured_secrets()
    if debug:
        text = "".join(traceback.format_exception(exc))
        sys.stderr.write(mask(text, secrets))
    elif isinstance(exc, AgentsMemoryError):
        click.echo(mask(f"error: {exc}", secrets), err=True)
    elif isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(mask(f"error: {exc.strerror}{where}", secrets), err=True)
    else:
        line = f"error: unexpected {type(exc).__name__}: {first_line(exc)} (--debug shows where)"
        click.echo(mask(line, secrets), err=True)
    sys.exit(1)


def debug_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--debug``: tracebacks instead of one-line errors, and DEBUG logging."""
    return click.option(
        _DEBUG_FLAG,
        is_flag=True,
        expose_value=False,
        is_eager=True,
        help="Show tracebacks and debug logging.",
    )(func)
