"""Our harness for the real agent CLIs: npm and pip installs, a loopback-only network namespace
with the fake model in it, and one class per CLI that knows its config files and headless flags.

Nothing here knows about pytest; ``conftest.py`` turns it into fixtures. The CLIs are installed
with npm (or, for Hermes Agent, pip into a venv of its own) into a cache directory and reused;
every run gets a throwaway HOME and project dir,
and runs inside a network namespace that has only ``lo`` (``unshare -n``), so a CLI can reach
nothing but our fake model on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FAKE_MODEL = HERE / "fake_model.py"
MODEL_PORT = 18080
RUN_TIMEOUT = 120.0


class HarnessUnavailable(RuntimeError):
    """The machine cannot run the suite (no npm, no registry, no namespaces): a skip reason."""


# --- processes --------------------------------------------------------------------------------


@dataclass(slots=True)
class Ran:
    """One finished command, kept for assertions and failure messages."""

    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float

    def tail(self, lines: int = 15) -> str:
        def last(text: str) -> str:
            return "\n".join(text.strip().splitlines()[-lines:])

        return (
            f"$ {' '.join(self.argv)}\n-> rc={self.returncode} in {self.seconds:.1f}s\n"
            f"--- stdout\n{last(self.stdout)}\n--- stderr\n{last(self.stderr)}"
        )


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = RUN_TIMEOUT,
    stdin: str = "",
) -> Ran:
    """Run to completion (the whole process group is killed on a time-out)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\n[harness] killed after {timeout:.0f}s"
    return Ran(list(argv), proc.returncode, out, err, time.monotonic() - started)


# --- npm and pip installs ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NpmPackage:
    name: str
    spec: str
    binary: str


@dataclass(frozen=True, slots=True)
class PipPackage:
    """A CLI from PyPI, installed into ``<root>/<name>/venv``; its ``binary`` is linked alone
    into ``<root>/<name>/bin`` (so the venv's ``python`` does not shadow the system's on PATH)."""

    name: str
    spec: str
    binary: str
    distribution: str


Package = NpmPackage | PipPackage


@dataclass(frozen=True, slots=True)
class Installed:
    package: Package
    bin_dir: Path
    version: str
    install_seconds: float | None
    """``None`` when the cached install was reused."""


def cli_root() -> Path:
    override = os.environ.get("E2E_CLI_ROOT")
    if override:
        return Path(override)
    return Path.home() / ".cache" / "mcp-agents-memory-e2e" / "cli"


def ensure_installed(package: Package, root: Path, timeout: float = 300.0) -> Installed:
    """Install the package into ``root/<name>`` unless its binary is already there."""
    if isinstance(package, PipPackage):
        return _ensure_pip(package, root, timeout)
    target = root / package.name
    bin_dir = target / "node_modules" / ".bin"
    seconds = None
    if not (bin_dir / package.binary).exists():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise HarnessUnavailable("node and npm are needed to install the agent CLIs")
        target.mkdir(parents=True, exist_ok=True)
        manifest = target / "package.json"
        if not manifest.exists():
            manifest.write_text('{"private": true}\n', encoding="utf-8")
        argv = [npm, "install", "--no-fund", "--no-audit", "--no-update-notifier", package.spec]
        done = run(argv, env=os.environ, cwd=target, timeout=timeout)
        if done.returncode != 0 or not (bin_dir / package.binary).exists():
            raise HarnessUnavailable(
                f"`npm install {package.spec}` failed (registry unreachable?):\n{done.tail(8)}"
            )
        seconds = done.seconds
    version = run(
        [str(bin_dir / package.binary), "--version"], env=os.environ, cwd=target, timeout=60
    )
    if version.returncode != 0:
        raise HarnessUnavailable(f"{package.spec} is installed but does not run:\n{version.tail()}")
    return Installed(package, bin_dir, version.stdout.strip(), seconds)


def _ensure_pip(package: PipPackage, root: Path, timeout: float) -> Installed:
    """``python -m venv`` + ``pip install`` (the version is read from the installed metadata:
    Hermes's ``--version`` checks for updates online)."""
    target = root / package.name
    venv, bin_dir = target / "venv", target / "bin"
    python = venv / "bin" / "python"
    seconds = None
    if not (bin_dir / package.binary).exists():
        started = time.monotonic()
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        made = run([sys.executable, "-m", "venv", str(venv)], env=os.environ, cwd=target)
        if made.returncode != 0:
            raise HarnessUnavailable(f"cannot create a venv for {package.spec}:\n{made.tail(8)}")
        argv = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        done = run([*argv, package.spec], env=os.environ, cwd=target, timeout=timeout * 2)
        if done.returncode != 0 or not (venv / "bin" / package.binary).exists():
            raise HarnessUnavailable(
                f"`pip install {package.spec}` failed (index unreachable?):\n{done.tail(8)}"
            )
        bin_dir.mkdir()
        (bin_dir / package.binary).symlink_to(venv / "bin" / package.binary)
        seconds = time.monotonic() - started
    code = f"import importlib.metadata as m; print(m.version({package.distribution!r}))"
    version = run([str(python), "-c", code], env=os.environ, cwd=target, timeout=60)
    if version.returncode != 0:
        raise HarnessUnavailable(f"{package.spec} is installed but broken:\n{version.tail()}")
    return Installed(package, bin_dir, version.stdout.strip(), seconds)


# --- the network namespace with the fake model -------------------------------------------------


def priority() -> list[str]:
    """``nice -n -10`` as root (``E2E_NICE`` overrides, ``0`` turns it off): on a shared,
    busy machine the CLI's tree (its hooks and our MCP server, cold Python starts of about a
    second of CPU each) must not starve past the CLI's own hook and start-up time-outs."""
    level = os.environ.get("E2E_NICE", "-10" if os.geteuid() == 0 else "0")
    return [] if level in ("", "0") else ["nice", "-n", level]


def check_namespaces() -> None:
    """Raise :class:`HarnessUnavailable` unless we may create a network namespace."""
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            raise HarnessUnavailable(f"`{tool}` (util-linux/iproute2) is not installed")
    probe = run(["unshare", "-n", "ip", "link", "set", "lo", "up"], env=os.environ, cwd=HERE)
    if probe.returncode != 0:
        raise HarnessUnavailable(
            "cannot create a network namespace (`unshare -n` needs root or user namespaces): "
            + (probe.stderr.strip() or f"rc={probe.returncode}")
        )


@dataclass(slots=True)
class ModelServer:
    """The fake model, first process of its own loopback-only network namespace."""

    proc: subprocess.Popen[str]
    log: Path

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the server's network namespace (see :func:`priority`)."""
        return [*priority(), "nsenter", f"--net=/proc/{self.proc.pid}/ns/net", "--", *argv]

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@contextmanager
def model_server(
    log: Path,
    *,
    expect: str,
    tool_args: Mapping[str, Any],
    tool: str = "search_memory",
    plan: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> Iterator[ModelServer]:
    """Start the fake model in a new network namespace; stop it on exit. A prompt with
    ``USE_TOOL`` makes it call the offered tool whose name contains ``tool``; one with
    ``USE_PLAN`` the tools of ``plan`` in order."""
    argv = [
        "unshare",
        "-n",
        "--",
        sys.executable,
        str(FAKE_MODEL),
        "--setup-loopback",
        f"--port={MODEL_PORT}",
        f"--log={log}",
        f"--expect={expect}",
        f"--tool-args={json.dumps(tool_args)}",
        f"--tool={tool}",
        f"--plan={json.dumps([[name, dict(args)] for name, args in plan])}",
    ]
    errors = log.with_suffix(".stderr")
    with errors.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # blocks until it listens, or until it dies
        if not ready.startswith("READY"):
            raise HarnessUnavailable(
                f"the fake model did not start: {errors.read_text(encoding='utf-8')[-500:]}"
            )
        yield ModelServer(proc, log)
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


# --- the throwaway home ------------------------------------------------------------------------


@dataclass(slots=True)
class Workspace:
    """A throwaway HOME and project directory for one CLI, and the environment to run in."""

    home: Path
    project: Path
    bin_dirs: list[Path]
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """A clean environment: nothing from the caller's shell except a few basics, so the
        product finds its settings through HOME exactly as on a user's machine."""
        path = [str(d) for d in self.bin_dirs] + ["/usr/local/bin", "/usr/bin", "/bin"]
        node = shutil.which("node")
        if node:
            path.append(str(Path(node).parent))
        env = {
            "HOME": str(self.home),
            "PATH": os.pathsep.join(path),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "USER": os.environ.get("USER", "root"),
            "TMPDIR": str(self.home / "tmp"),
            "NO_COLOR": "1",
            # The hook's own fail-open budget (default 1.5 s) is about what a cold Python start
            # of the hook takes on a 2-core machine; a loaded CI box would silently drop the
            # brief and make the suite flaky. The budget itself is covered by unit tests.
            "HOOK_TIMEOUT_MS": "30000",
        }
        if os.environ.get("PYTHONPATH"):  # a worktree's code, not the installed package's
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        return env | self.extra_env
