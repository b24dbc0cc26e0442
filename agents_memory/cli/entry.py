"""The two console scripts' entries: ``memory-capture`` (:func:`main`) and
``mcp-agents-memory`` (:func:`memory_main`).

Both first refuse a Python older than 3.11 with one clear line (this module parses on old
Pythons; the rest of the package does not import there). Hook invocations (``hook
session-start``, ``hook flush``) go straight to the standard-library fast path, which arms their
deadline before anything heavy is imported; a plain ``search`` asks the capture daemon to run
it first (:mod:`agents_memory.cli.fast_search`, standard library only); everything else,
``--help`` included, goes to the click CLI in :mod:`agents_memory.cli.capture` or
:mod:`agents_memory.cli.memory`.
"""

from __future__ import annotations

import sys

MINIMUM = (3, 11)


def require_python(version: tuple[int, ...] = tuple(sys.version_info[:2])) -> None:
    """Exit with one line when ``version`` is older than :data:`MINIMUM`."""
    if tuple(version[:2]) < MINIMUM:
        need = ".".join(map(str, MINIMUM))
        have = ".".join(map(str, version[:2]))
        sys.exit(
            f"mcp-agents-memory needs Python {need} or newer; this is Python {have} "
            f"({sys.executable}). Install it with a newer one: `pipx install --python "
            f"python{need} .`"
        )


def main() -> None:
    require_python()
    from agents_memory.hooks.fast import run, wants_fast_path

    if wants_fast_path(sys.argv[1:]):
        run(sys.argv[2:])  # never returns
    from agents_memory.cli.capture import main as cli_main

    cli_main()


def memory_main() -> None:
    require_python()
    from agents_memory.cli.fast_search import run, wants_fast_path

    if wants_fast_path(sys.argv[1:]):
        run(sys.argv[1:])  # exits when the capture daemon answered; else the full command
    from agents_memory.cli.memory import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
