"""Our harness for the real agent CLIs: npm installs, a loopback-only network namespace with
the fake model in it, and one class per CLI that knows its config files and headless flags.

Nothing here knows about pytest; ``conftest.py`` turns it into fixtures. The CLIs are installed
with npm into a cache directory and reused; every run gets a throwaway HOME and project dir,
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
from typing import Any, ClassVar

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


# --- npm installs -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NpmPackage:
    name: str
    spec: str
    binary: str


@dataclass(frozen=True, slots=True)
class Installed:
    package: NpmPackage
    bin_dir: Path
    version: str
    install_seconds: float | None
    """``None`` when the cached install was reused."""


def cli_root() -> Path:
    override = os.environ.get("E2E_CLI_ROOT")
    if override:
        return Path(override)
    return Path.home() / ".cache" / "mcp-agents-memory-e2e" / "cli"


def ensure_installed(package: NpmPackage, root: Path, timeout: float = 300.0) -> Installed:
    """``npm install`` the package into ``root/<name>`` unless its binary is already there."""
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
    log: Path, *, expect: str, tool_args: Mapping[str, Any], tool: str = "search_memory"
) -> Iterator[ModelServer]:
    """Start the fake model in a new network namespace; stop it on exit. A prompt with
    ``USE_TOOL`` makes it call the offered tool whose name contains ``tool``."""
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


# --- the agent CLIs ---------------------------------------------------------------------------


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
        return env | self.extra_env


class AgentCli:
    """What differs between the CLIs. Subclasses set the class attributes."""

    platform: ClassVar[str]
    package: ClassVar[NpmPackage]
    #: files ``memory-capture install`` edits (relative to HOME), checked after ``uninstall``
    config_files: ClassVar[tuple[str, ...]]

    def __init__(self, installed: Installed) -> None:
        self.installed = installed

    @property
    def exe(self) -> str:
        return str(self.installed.bin_dir / self.package.binary)

    def prepare(self, ws: Workspace) -> None:
        """Write the user's own settings (model provider, telemetry off) before our install."""

    def after_install(self, ws: Workspace) -> None:
        """Settings a user would add after install (approvals)."""

    def mcp_list(self) -> list[str]:
        return [self.exe, "mcp", "list"]

    def headless(self, prompt: str) -> list[str]:
        raise NotImplementedError

    def transcripts(self, home: Path) -> list[Path]:
        raise NotImplementedError


MODEL_URL = f"http://127.0.0.1:{MODEL_PORT}"


class ClaudeCode(AgentCli):
    platform = "claude-code"
    package = NpmPackage("claude", "@anthropic-ai/claude-code", "claude")
    config_files = (".claude/settings.json", ".claude.json")

    def prepare(self, ws: Workspace) -> None:
        ws.extra_env |= {
            "ANTHROPIC_BASE_URL": MODEL_URL,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "ENABLE_TOOL_SEARCH": "false",
            # `-p` connects MCP servers in the background and sends the first request without
            # waiting; ours takes seconds to import (the mcp SDK), so it would miss the turn.
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_CONNECT_TIMEOUT_MS": "120000",
            "MCP_TIMEOUT": "120000",
        }

    def headless(self, prompt: str) -> list[str]:
        tool = "mcp__mcp-agents-memory__search_memory"
        return [self.exe, "-p", prompt, "--output-format", "json", "--allowedTools", tool]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


class CodexCli(AgentCli):
    platform = "codex-cli"
    package = NpmPackage("codex", "@openai/codex", "codex")
    config_files = (".codex/hooks.json", ".codex/config.toml")

    def prepare(self, ws: Workspace) -> None:
        ws.extra_env |= {"FAKE_API_KEY": "dummy"}
        config = ws.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            f"""\
# the user's own Codex settings (a local model provider)
model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake local"
base_url = "{MODEL_URL}/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
apps = false
remote_plugin = false
in_app_updates = false

[analytics]
enabled = false

[projects."{ws.project}"]
trust_level = "trusted"
""",
            encoding="utf-8",
        )

    def after_install(self, ws: Workspace) -> None:
        # With approval_policy = "never", `codex exec` refuses MCP tools not approved up front;
        # a user approves ours once. Appending a key to our table is what that amounts to.
        import tomlkit

        config = ws.home / ".codex" / "config.toml"
        doc = tomlkit.parse(config.read_text(encoding="utf-8"))
        ours = doc["mcp_servers"]["mcp-agents-memory"]  # type: ignore[index]
        ours["default_tools_approval_mode"] = "approve"  # type: ignore[index]
        config.write_text(tomlkit.dumps(doc), encoding="utf-8")

    def headless(self, prompt: str) -> list[str]:
        return [self.exe, "exec", "--skip-git-repo-check", "--json", prompt]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))


class GeminiCli(AgentCli):
    platform = "gemini-cli"
    package = NpmPackage("gemini", "@google/gemini-cli", "gemini")
    config_files = (".gemini/settings.json",)

    def prepare(self, ws: Workspace) -> None:
        ws.extra_env |= {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": MODEL_URL}
        settings = {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": False},
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        path = ws.home / ".gemini" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")

    def headless(self, prompt: str) -> list[str]:
        tool = "mcp_mcp-agents-memory_search_memory"
        return [self.exe, "-p", prompt, "--output-format", "json", "--allowed-tools", tool]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))


CLIS: dict[str, type[AgentCli]] = {cls.platform: cls for cls in (ClaudeCode, CodexCli, GeminiCli)}
