"""Hermes's per-prompt recall: install writes our plugin and enables it through
`hermes plugins enable`, uninstall takes our name out of Hermes's plugin lists, item by index,
and its `plugins.entries` with `hermes config unset` before deleting the directory (no name of
ours is left in `config.yaml`); the plugin's hook hands Hermes what our command prints and
nothing on a failure.

The `hermes` here stands in for Hermes 0.19.0's CLI (tests/install/test_hermes_mcp.py does
the same for `hermes mcp`): it logs its argv and edits ~/.hermes/config.yaml as Hermes does
(`enable` adds to `plugins.enabled` and writes `plugins.entries.<name>`, `disable` moves the
name to `plugins.disabled`, `unset` deletes a key or a list's item by its index), refusing a
plugin whose directory has no manifest, as Hermes does. The real program runs it in
tests/e2e/test_prompt_recall.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from agents_memory.adapters import hermes_plugin
from agents_memory.adapters.base import Commands
from agents_memory.install.installer import installed_entries
from tests.install.conftest import make_executable

HERMES = """\
#!{python}
import os, sys, yaml
open({log!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
config_path = {config!r}
config = yaml.safe_load(open(config_path)) or {{}}
args = sys.argv[1:]
plugins = config.setdefault("plugins", {{}})
if args[:1] == ["plugins"]:
    name = args[2]
    if not os.path.exists(os.path.join({plugins!r}, name, "plugin.yaml")):
        print(f"Plugin '{{name}}' is not installed or bundled.")
        sys.exit(1)
    enabled = set(plugins.get("enabled", [])); disabled = set(plugins.get("disabled", []))
    if args[1] == "enable":
        enabled.add(name); disabled.discard(name)
        plugins.setdefault("entries", {{}})[name] = {{"allow_tool_override": False}}
    else:
        enabled.discard(name); disabled.add(name)
    plugins["enabled"] = sorted(enabled); plugins["disabled"] = sorted(disabled)
elif args[:2] == ["config", "unset"]:
    *parents, leaf = args[2].split(".")
    node = config
    for key in parents:
        node = node.get(key, {{}})
    if isinstance(node, list):  # an item by its index; Hermes keeps the list it empties
        node.pop(int(leaf))
    else:
        node.pop(leaf, None)
        if not node and len(parents) > 1:  # Hermes drops the mapping the key leaves empty
            config[parents[0]].pop(parents[1], None)
elif args[:1] == ["mcp"]:
    sys.exit(0)
yaml.safe_dump(config, open(config_path, "w"), sort_keys=False)
"""


def fake_hermes(tmp_path: Path, home: Path) -> tuple[Path, Path]:
    log = tmp_path / "hermes.log"
    config = home / ".hermes" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("model:\n  provider: custom\n", encoding="utf-8")
    text = HERMES.format(
        python=sys.executable,
        log=str(log),
        config=str(config),
        plugins=str(config.parent / "plugins"),
    )
    return make_executable(tmp_path / "bin" / "hermes", text), log


def test_install_enables_the_plugin_and_uninstall_disables_and_deletes_it(
    home: Path, tmp_path: Path, commands: Commands, make_installer
) -> None:
    hermes, log = fake_hermes(tmp_path, home)
    installer = make_installer(which=lambda name: str(hermes) if name == "hermes" else None)
    report = installer.run("install", ("hermes",))
    directory = hermes_plugin.plugin_dir(home)
    source = (directory / "__init__.py").read_text("utf-8")
    assert (
        json.dumps([str(commands.memory_capture), "hook", "prompt", "--platform", "hermes"])[1:-1]
        in source
    )
    assert "plugins enable mcp-agents-memory --no-allow-tool-override" in log.read_text("utf-8")
    config = home / ".hermes" / "config.yaml"
    assert hermes_plugin.is_enabled(config.read_text("utf-8"))
    notes = [n for c in report.clients for n in c.notes]
    assert any(n.startswith("enabled per-prompt recall") for n in notes), notes
    shown = installed_entries(home)["hermes"]
    assert any("per-prompt recall plugin (enabled)" in e for e in shown), shown

    again = installer.run("install", ("hermes",))
    assert log.read_text("utf-8").count("plugins enable") == 1, "enabled once"
    assert any("already has the plugin" in n for c in again.clients for n in c.notes)

    (directory / "__pycache__").mkdir()  # Hermes imports the plugin: Python caches it there
    installer.run("uninstall", ("hermes",))
    said = log.read_text("utf-8").splitlines()
    assert said[-2:] == [
        "config unset plugins.enabled.0",
        "config unset plugins.entries.mcp-agents-memory",
    ]
    after = config.read_text("utf-8")
    assert not hermes_plugin.is_enabled(after)
    assert "mcp-agents-memory" not in after, "no entry of ours is left in Hermes's lists"
    assert "entries" not in after and "provider: custom" in after
    assert not directory.exists()
    assert not any("plugin" in e for e in installed_entries(home)["hermes"])


def test_uninstall_takes_only_our_name_out_of_lists_holding_other_plugins(
    home: Path, tmp_path: Path, make_installer
) -> None:
    hermes, log = fake_hermes(tmp_path, home)
    installer = make_installer(which=lambda name: str(hermes) if name == "hermes" else None)
    installer.run("install", ("hermes",))
    config = home / ".hermes" / "config.yaml"
    settings = yaml.safe_load(config.read_text("utf-8"))
    settings["plugins"]["enabled"] = ["alpha", "mcp-agents-memory", "zeta"]
    settings["plugins"]["disabled"] = ["beta", "mcp-agents-memory"]  # the user disabled ours
    config.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    installer.run("uninstall", ("hermes",))
    after = yaml.safe_load(config.read_text("utf-8"))
    assert after["plugins"] == {"enabled": ["alpha", "zeta"], "disabled": ["beta"]}
    assert "config unset plugins.enabled.1" in log.read_text("utf-8")


def test_without_hermes_on_path_the_plugin_is_written_and_the_command_is_a_note(
    home: Path, commands: Commands, make_installer
) -> None:
    (home / ".hermes").mkdir()
    report = make_installer().run("install", ("hermes",))
    notes = [n for c in report.clients for n in c.notes]
    assert (hermes_plugin.plugin_dir(home) / "plugin.yaml").is_file()
    shown = "hermes is not on PATH: turn per-prompt recall on with `hermes plugins enable"
    assert any(n.startswith(shown) for n in notes), notes
    make_installer().run("uninstall", ("hermes",))
    assert not hermes_plugin.plugin_dir(home).exists()


def _plugin(tmp_path: Path, command: list[str]) -> Any:
    source = hermes_plugin.plugin_source(Commands(Path("/x/memory-capture"), Path("/x/mcp")))
    argv = json.dumps(["/x/memory-capture", "hook", "prompt", "--platform", "hermes"])
    path = tmp_path / f"plugin-{len(list(tmp_path.iterdir()))}" / "__init__.py"
    path.parent.mkdir()
    path.write_text(source.replace(argv, json.dumps(command)), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("am_hermes_plugin", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    hooks: dict[str, Any] = {}

    class Context:  # what the plugin uses of Hermes's PluginContext
        def register_hook(self, name: str, callback: Any) -> None:
            hooks[name] = callback

    module.register(Context())
    return hooks["pre_llm_call"]


def test_the_plugins_hook_returns_the_commands_output_as_context(tmp_path: Path) -> None:
    echo = make_executable(
        tmp_path / "recall",
        f"#!{sys.executable}\nimport json, sys\n"
        "e = json.load(sys.stdin)\n"
        "print('memories for: ' + e['prompt'] + ' in ' + e['session_id'])\n",
    )
    hook = _plugin(tmp_path, [str(echo)])
    got = hook(session_id="s1", user_message="why did QX-4471 fail?", model="m", platform="cli")
    assert got == {"context": "memories for: why did QX-4471 fail? in s1"}
    assert hook(session_id="s1", user_message="   ") is None


def test_the_plugins_hook_adds_nothing_when_the_command_fails(tmp_path: Path) -> None:
    failing = make_executable(tmp_path / "recall", "#!/bin/sh\nexit 3\n")
    assert _plugin(tmp_path, [str(failing)])(session_id="s", user_message="hello") is None
    missing = tmp_path / "no-such-command"
    assert _plugin(tmp_path, [str(missing)])(session_id="s", user_message="hello") is None
