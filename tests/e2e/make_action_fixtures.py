"""Make the tool-call fixtures (``tests/fixtures/transcripts/actions/``) with the real clients.

    PYTHONPATH=$PWD python -m tests.e2e.make_action_fixtures OUTDIR [platform ...]

For each client (default: every one in :data:`tests.e2e.clis.CLIS`), installed as the e2e
suite installs it, one headless run in a throwaway HOME under ``/tmp/am-actions/<platform>``
(fixed, so the paths in the fixtures are the same on every run), offline against the fake model,
which makes the calls of :func:`tests.e2e.action_plans.plan` (write, read, edit, a failing
shell command with :data:`FIXTURE_TOKEN` in it). Nothing of ours is installed: the transcript
is the client's alone. The transcript (a JSONL file, or the client's SQLite store copied with
the backup API; Gemini CLI's with its project folder's ``.project_root``) goes to
``OUTDIR/<platform>/<version>/``; the command line is printed.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import sqlite3
import sys
from pathlib import Path

from tests.e2e.action_plans import plan
from tests.e2e.clis import CLIS, AgentCli
from tests.e2e.harness import Workspace, cli_root, ensure_installed, model_server, run

FIXTURE_TOKEN = "q7Vx2Lm9Rt4Kp8Wz3Nb6Hc1Ys5Df0Ga"
"""A made-up secret-looking value (no service issued it): the fixtures' command line holds it."""
PROMPT = "USE_PLAN: write the staging migration, read it, fix the table and run it. E2E-5eed0a11"
BASE = Path("/tmp/am-actions")


def make(platform: str, out: Path) -> list[Path]:
    """Run ``platform`` once and copy what it wrote to ``out/<platform>``."""
    cls = CLIS[platform]
    cli: AgentCli = cls(ensure_installed(cls.package, cli_root()))
    base = BASE / platform
    shutil.rmtree(base, ignore_errors=True)
    ws = Workspace(home=base / "home", project=base / "project", bin_dirs=[cli.installed.bin_dir])
    for directory in (ws.home / "tmp", ws.project, base / "logs"):
        directory.mkdir(parents=True)
    cli.prepare(ws)
    calls = plan(platform, ws.project, FIXTURE_TOKEN)
    log = base / "logs" / "requests.jsonl"
    with model_server(log, expect="", tool_args={}, plan=calls) as model:
        argv = cli.acting(PROMPT)
        ran = run(model.wrap(argv), env=ws.env(), cwd=ws.project, timeout=300)
        answers = [r.get("tool") or r.get("reply_text") for r in model.requests()]
    print(ran.tail(), file=sys.stderr)
    print(f"{platform}: the model answered {answers}", file=sys.stderr)
    target = out / platform / re.findall(r"\d+\.\d+\.\d+", cli.installed.version)[0]
    shutil.rmtree(target, ignore_errors=True)
    written = []
    for path in cli.transcripts(ws.home):
        copy = target / path.name
        if path.parent.name == "chats":  # Gemini CLI: the project's folder names its root
            copy = target / path.parent.parent.name / "chats" / path.name
            root = path.parent.parent / ".project_root"
            copy.parent.mkdir(parents=True)
            shutil.copyfile(root, copy.parent.parent / root.name)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".db":
            _backup(path, copy)
        else:
            shutil.copyfile(path, copy)
        written.append(copy)
    print(f"{platform} {cli.installed.version}: {shlex.join([Path(argv[0]).name, *argv[1:]])}")
    return written


def _backup(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite store (WAL folded in, journal mode DELETE)."""
    target.unlink(missing_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
        dst.execute("VACUUM")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("platforms", nargs="*", default=list(CLIS))
    args = parser.parse_args(argv)
    for platform in args.platforms:
        for path in make(platform, args.out):
            print(path)


if __name__ == "__main__":
    main()
