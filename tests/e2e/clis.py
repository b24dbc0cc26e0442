"""One class per agent CLI: its package, the user's own settings it needs (a model provider
pointing at the fake model, telemetry off), its config files and its headless command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from tests.e2e.harness import (
    MODEL_PORT,
    HarnessUnavailable,
    Installed,
    NpmPackage,
    Package,
    PipPackage,
    Workspace,
    run,
)


class AgentCli:
    """What differs between the CLIs. Subclasses set the class attributes."""

    platform: ClassVar[str]
    package: ClassVar[Package]
    #: files ``memory-capture install`` edits (relative to HOME), checked after ``uninstall``
    config_files: ClassVar[tuple[str, ...]]
    #: whether install adds hooks (else the brief comes from a managed block in a file)
    hooks: ClassVar[bool] = True
    #: the file (relative to HOME) whose managed block the capture daemon fills with the brief
    brief_file: ClassVar[str | None] = None
    #: whether the CLI's MCP listing connects to the servers (else it lists its config)
    mcp_list_connects: ClassVar[bool] = True
    #: whether the session has the model call ``save_message`` too (which must be refused:
    #: capture stores this client's turns; for the others tests/adapters covers it by name)
    save_probe: ClassVar[bool] = False

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

    def acting(self, prompt: str) -> list[str]:
        """The headless command line with the client's own file and shell tools allowed."""
        return self.headless(prompt)

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

    def acting(self, prompt: str) -> list[str]:
        # as root, --dangerously-skip-permissions is refused: the tools are allowed by name
        *argv, ours = self.headless(prompt)
        return [*argv, f"{ours},Bash,Edit,Read,Write"]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


class CodexCli(AgentCli):
    platform = "codex-cli"
    package = NpmPackage("codex", "@openai/codex", "codex")
    config_files = (".codex/hooks.json", ".codex/config.toml")
    mcp_list_connects = False

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

    def acting(self, prompt: str) -> list[str]:
        # headless Gemini offers only its read-only tools unless every call is approved
        return [self.exe, "-p", prompt, "--output-format", "json", "--approval-mode", "yolo"]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))


class OpenCode(AgentCli):
    platform = "opencode"
    package = NpmPackage("opencode", "opencode-ai@1.18.33", "opencode")
    config_files = (".config/opencode/opencode.json", ".config/opencode/AGENTS.md")
    hooks = False
    brief_file = ".config/opencode/AGENTS.md"
    save_probe = True

    def prepare(self, ws: Workspace) -> None:
        ws.extra_env |= {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            # The title request would be the first to carry the prompt; it is no turn.
            "agent": {"title": {"disable": True}},
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake local",
                    "options": {"baseURL": f"{MODEL_URL}/v1", "apiKey": "dummy"},
                    "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
                }
            },
        }
        path = ws.home / ".config" / "opencode" / "opencode.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    def headless(self, prompt: str) -> list[str]:
        # `opencode run` joins its words and quotes a word with spaces: one word per argument.
        return [self.exe, "run", *prompt.split()]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".local" / "share" / "opencode").glob("opencode.db"))


class HermesAgent(AgentCli):
    platform = "hermes"
    package = PipPackage("hermes", "hermes-agent[mcp]==0.19.0", "hermes", "hermes-agent")
    config_files = (".hermes/config.yaml", ".hermes/SOUL.md")
    hooks = False
    brief_file = ".hermes/SOUL.md"
    mcp_list_connects = False  # `hermes mcp list` reads config.yaml ("✓ enabled")
    save_probe = True

    def prepare(self, ws: Workspace) -> None:
        config = ws.home / ".hermes" / "config.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            f"""\
# the user's own Hermes settings (a local OpenAI-compatible model)
model:
  provider: custom
  default: fake-model
  base_url: {MODEL_URL}/v1
  api_key: dummy
""",
            encoding="utf-8",
        )
        # The user has run Hermes before: its first run seeds ~/.hermes/SOUL.md, which our
        # install only adds a block to (offline, like every run here).
        seeded = run(["unshare", "-n", self.exe, "mcp", "list"], env=ws.env(), cwd=ws.project)
        if not (ws.home / ".hermes" / "SOUL.md").is_file():
            raise HarnessUnavailable(f"hermes did not seed SOUL.md:\n{seeded.tail()}")

    def headless(self, prompt: str) -> list[str]:
        return [self.exe, "chat", "-Q", "-q", prompt]

    def transcripts(self, home: Path) -> list[Path]:
        return sorted((home / ".hermes").glob("state.db"))


CLIS: dict[str, type[AgentCli]] = {
    cls.platform: cls for cls in (ClaudeCode, CodexCli, GeminiCli, OpenCode, HermesAgent)
}
