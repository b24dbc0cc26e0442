"""The ``memory-capture`` console script.

Hook invocations (``hook session-start``, ``hook flush``) go straight to the standard-library
fast path, which arms their deadline before anything heavy is imported; everything else,
``--help`` included, goes to the click CLI in :mod:`agents_memory.cli.capture`.
"""

from __future__ import annotations

import sys


def main() -> None:
    from agents_memory.hooks.fast import run, wants_fast_path

    if wants_fast_path(sys.argv[1:]):
        run(sys.argv[2:])  # never returns
    from agents_memory.cli.capture import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
