"""The tool calls the fake model makes a real client run (``USE_PLAN``), per client: write a
small script, read it, edit it, run it with a secret-looking token in the command line. The
run fails (exit code 3, an ``error:`` line on stderr), so every client records a failing shell
call beside a write, a read and an edit, each in its own tool format.

Used by ``make_action_fixtures.py`` (the fixtures under ``tests/fixtures/transcripts/actions/``)
and by ``test_actions_e2e.py`` (the same calls with our capture running).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCRIPT = "migrate_orders.py"
OLD_LINE = 'TABLE = "orders"'
NEW_LINE = 'TABLE = "orders_archive"'
CONTENT = f"""import sys

{OLD_LINE}


def main() -> int:
    print(f"migrating {{TABLE}} on staging")
    print(f"error: relation {{TABLE}} does not exist", file=sys.stderr)
    return 3


sys.exit(main())
"""
TOKEN_NAME = "DEPLOY_TOKEN"
ERROR_LINE = "error: relation orders_archive does not exist"
EXIT_CODE = 3
COMMAND_WORDS = "python3 migrate_orders.py --env staging"
"""The failing command without its token (what a stored action's command line ends with)."""

Plan = list[tuple[str, dict[str, Any]]]


def command(token: str) -> str:
    """The failing shell command, with ``token`` as its secret."""
    return f"{TOKEN_NAME}={token} {COMMAND_WORDS}"


def _codex_patch(body: str) -> str:
    return f"apply_patch <<'EOF'\n*** Begin Patch\n{body}*** End Patch\nEOF\n"


def plan(platform: str, project: Path, token: str) -> Plan:
    """The calls for ``platform`` (its tool names and argument names), in order: write, read,
    edit, the failing shell command."""
    path = str(project / SCRIPT)
    run = command(token)
    if platform == "claude-code":
        return [
            ("Write", {"file_path": path, "content": CONTENT}),
            ("Read", {"file_path": path}),
            ("Edit", {"file_path": path, "old_string": OLD_LINE, "new_string": NEW_LINE}),
            ("Bash", {"command": run, "description": "Run the staging migration"}),
        ]
    if platform == "codex-cli":  # no file tools of its own: apply_patch and cat in the shell
        added = "".join(f"+{line}\n" for line in CONTENT.splitlines())
        update = f"*** Update File: {SCRIPT}\n@@\n-{OLD_LINE}\n+{NEW_LINE}\n"
        return [
            ("exec_command", {"cmd": _codex_patch(f"*** Add File: {SCRIPT}\n{added}")}),
            ("exec_command", {"cmd": f"cat {SCRIPT}"}),
            ("exec_command", {"cmd": _codex_patch(update)}),
            ("exec_command", {"cmd": run}),
        ]
    if platform == "gemini-cli":
        return [
            ("write_file", {"file_path": path, "content": CONTENT}),
            ("read_file", {"file_path": path}),
            (
                "replace",
                {
                    "file_path": path,
                    "old_string": OLD_LINE,
                    "new_string": NEW_LINE,
                    "instruction": "Point the migration at the archive table.",
                },
            ),
            ("run_shell_command", {"command": run, "description": "Run the staging migration"}),
        ]
    if platform == "opencode":
        return [
            ("write", {"filePath": path, "content": CONTENT}),
            ("read", {"filePath": path}),
            ("edit", {"filePath": path, "oldString": OLD_LINE, "newString": NEW_LINE}),
            ("bash", {"command": run, "description": "Run the staging migration"}),
        ]
    if platform == "hermes":
        return [
            ("write_file", {"path": path, "content": CONTENT}),
            ("read_file", {"path": path}),
            (
                "patch",
                {"mode": "replace", "path": path, "old_string": OLD_LINE, "new_string": NEW_LINE},
            ),
            ("terminal", {"command": run}),
        ]
    raise ValueError(f"no plan for {platform}")
