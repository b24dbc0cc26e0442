"""`memory-capture install` / `uninstall` end to end through click, with fake executables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agents_memory.cli.capture import cli
from agents_memory.install import services
from tests.install.conftest import fake_systemctl, load, seed_home


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    return path


def invoke(
    home: Path, bin_dir: Path, *args: str, cold_path: bool = True, database_url: str | None = None
) -> Result:
    """The CLI in ``home``. Without ``database_url`` an install writes files only (no database,
    no import, no daemon started): these tests are about the files and the service calls."""
    if args and args[0] == "install" and database_url is None:
        args = (*args, "--files-only")
    env = {
        "HOME": str(home),
        "PATH": str(bin_dir),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMORY_CONFIG_PATH": str(home / "no-such.env"),
        "COLD_PATH_ENABLED": "true" if cold_path else "false",
        "EMBEDDING_BACKEND": "none",
    }
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_install_with_systemd_creates_the_database_writes_units_and_starts_the_daemon(
    home: Path, bin_dir: Path, tmp_path: Path, db_url: str
) -> None:
    log = tmp_path / "systemctl.log"
    fake_systemctl(bin_dir, log)
    seed_home(home)
    result = invoke(home, bin_dir, "install", "--platform", "claude-code", database_url=db_url)
    assert result.exit_code == 0, result.output
    assert "database: " in result.output and "0 rows stored" in result.output
    unit_dir = home / ".config" / "systemd" / "user"
    capture = (unit_dir / services.CAPTURE_UNIT).read_text("utf-8")
    exec_start = next(line for line in capture.splitlines() if line.startswith("ExecStart="))
    script = Path(exec_start.removeprefix("ExecStart=").split()[0])
    assert script.is_absolute() and script.name == "memory-capture" and script.exists()
    assert "Restart=on-failure" in capture and "KillSignal=SIGTERM" in capture
    assert "TimeoutStopSec=" in capture
    coldpath = (unit_dir / services.COLDPATH_UNIT).read_text("utf-8")
    assert "coldpath" in coldpath
    calls = log.read_text("utf-8").splitlines()
    assert calls == [
        "--user show-environment",
        "--user daemon-reload",
        f"--user is-enabled --quiet {services.CAPTURE_UNIT}",
        f"--user is-active --quiet {services.CAPTURE_UNIT}",
        f"--user enable --now {services.CAPTURE_UNIT}",
        f"--user enable --now {services.COLDPATH_UNIT}",
    ]
    assert f"started and enabled {services.COLDPATH_UNIT}" in result.output
    assert "claude-code: updated" in result.output and "backups:" in result.output

    log.unlink()
    again = invoke(home, bin_dir, "install", "--platform", "claude-code", database_url=db_url)
    assert again.exit_code == 0
    assert "nothing to change" in again.output
    assert "daemon-reload" not in log.read_text("utf-8")
    assert "enable" not in log.read_text("utf-8").replace("is-enabled", "")

    log.unlink()
    gone = invoke(home, bin_dir, "uninstall", database_url=db_url)
    assert gone.exit_code == 0, gone.output
    assert not (unit_dir / services.CAPTURE_UNIT).exists()
    assert log.read_text("utf-8").splitlines() == [
        "--user show-environment",
        f"--user disable --now {services.CAPTURE_UNIT} {services.COLDPATH_UNIT}",
        "--user daemon-reload",
    ]


def test_without_systemctl_install_says_how_to_run_and_succeeds(home: Path, bin_dir: Path) -> None:
    result = invoke(home, bin_dir, "install", "--platform", "grok")
    assert result.exit_code == 0, result.output
    assert "No systemd user session here" in result.output
    assert "memory-capture run" in result.output and "nohup" in result.output
    assert not (home / ".config" / "systemd").exists()
    assert load(home / ".grok" / "config.toml")


def test_when_systemctl_user_fails_install_says_how_to_run(
    home: Path, bin_dir: Path, tmp_path: Path
) -> None:
    fake_systemctl(bin_dir, tmp_path / "systemctl.log", rc=1)
    result = invoke(home, bin_dir, "install", "--platform", "grok")
    assert result.exit_code == 0, result.output
    assert "No systemd user session here" in result.output
    assert not (home / ".config" / "systemd").exists()  # units nothing would ever start
    assert "installed for grok" in result.output and "next steps:" in result.output


def test_uninstall_with_systemd_offline_does_not_claim_it_stopped_units(
    home: Path, bin_dir: Path, tmp_path: Path
) -> None:
    """Units left by an install from when systemd answered: they go, and nothing is said to
    have been stopped, since nothing could be running under an offline user manager."""
    log = tmp_path / "systemctl.log"
    fake_systemctl(bin_dir, log)
    assert invoke(home, bin_dir, "install", "--platform", "hermes").exit_code == 0
    fake_systemctl(bin_dir, log, rc=1)
    gone = invoke(home, bin_dir, "uninstall")
    assert gone.exit_code == 0, gone.output
    assert "stopped and disabled" not in gone.output
    assert "no systemd user session here, so no unit was running" in gone.output
    assert "install again" not in gone.output  # Hermes's install hint is not for an uninstall
    assert not (home / ".config" / "systemd" / "user" / services.CAPTURE_UNIT).exists()
    assert "disable" not in log.read_text("utf-8")


def test_coldpath_unit_is_not_written_when_the_cold_path_is_disabled(
    home: Path, bin_dir: Path, tmp_path: Path
) -> None:
    fake_systemctl(bin_dir, tmp_path / "systemctl.log")
    result = invoke(home, bin_dir, "install", "--platform", "grok", cold_path=False)
    assert result.exit_code == 0
    unit_dir = home / ".config" / "systemd" / "user"
    assert (unit_dir / services.CAPTURE_UNIT).exists()
    assert not (unit_dir / services.COLDPATH_UNIT).exists()


def test_dry_run_prints_a_diff_and_writes_nothing(
    home: Path, bin_dir: Path, tmp_path: Path
) -> None:
    originals = seed_home(home)
    log = tmp_path / "systemctl.log"
    fake_systemctl(bin_dir, log)
    result = invoke(home, bin_dir, "install", "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"--- {home / '.codex' / 'config.toml'}" in result.output
    assert "+[mcp_servers.mcp-agents-memory]" in result.output
    assert "dry run: nothing was written" in result.output
    for path, text in originals.items():
        assert path.read_text("utf-8") == text
    assert not (home / ".config" / "systemd").exists()
    assert not (home / ".local" / "state").exists()
    assert log.read_text("utf-8").splitlines() == ["--user show-environment"]  # a question only


def test_malformed_config_exits_1_after_installing_the_rest(home: Path, bin_dir: Path) -> None:
    seed_home(home)
    (home / ".gemini" / "settings.json").write_text("{nope", encoding="utf-8")
    result = invoke(home, bin_dir, "install")
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "settings.json: not valid JSON" in errors[0]
    assert (home / ".gemini" / "settings.json").read_text("utf-8") == "{nope"
    assert "mcp-agents-memory" in (home / ".claude.json").read_text("utf-8")


def test_install_detects_only_the_clients_present(home: Path, bin_dir: Path) -> None:
    (home / ".codex").mkdir()
    result = invoke(home, bin_dir, "install")
    assert result.exit_code == 0, result.output
    assert (home / ".codex" / "hooks.json").exists()
    assert not (home / ".claude.json").exists() and not (home / ".grok").exists()
    nothing = home.parent / "empty-home"
    nothing.mkdir()
    result = invoke(nothing, bin_dir, "install")
    assert "no supported agent client found" in result.output


def test_both_commands_have_help() -> None:
    for name in ("install", "uninstall"):
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0
        assert "--dry-run" in result.output and "--platform" in result.output


def test_the_documented_units_mirror_the_packaged_templates() -> None:
    root = Path(__file__).resolve().parents[2]
    for name in (services.CAPTURE_UNIT, services.COLDPATH_UNIT):
        assert (root / "systemd" / name).read_text("utf-8") == services.template(name)


def test_install_with_codex_on_path_trusts_the_hooks(home: Path, bin_dir: Path) -> None:
    from tests.install.conftest import fake_codex

    fake_codex(bin_dir)
    result = invoke(home, bin_dir, "install", "--platform", "codex-cli", "--yes")
    assert result.exit_code == 0, result.output
    assert "codex-cli: trusted 3 Codex hook(s)" in result.output
    assert "hooks.state" in (home / ".codex" / "config.toml").read_text("utf-8")


def test_real_install_and_uninstall_exit_1_naming_the_client_skipped_for_a_malformed_file(
    home: Path, bin_dir: Path
) -> None:
    """The console script itself (not click's runner): its exit code is what shells see."""
    seed_home(home)
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"permissions": {', encoding="utf-8")
    env = {
        "HOME": str(home),
        "PATH": str(bin_dir),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMORY_CONFIG_PATH": str(home / "no-such.env"),
    }
    script = str(Path(sys.executable).parent / "memory-capture")
    for action in ("install", "uninstall"):
        files_only = ["--files-only"] if action == "install" else []
        result = subprocess.run(
            [script, action, "--yes", *files_only],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1, (action, result.stdout, result.stderr)
        errors = result.stderr.strip().splitlines()
        assert len(errors) == 1, (action, result.stderr)
        assert errors[0].startswith(f"error: claude-code: {settings}: not valid JSON")
        assert "skipped" in errors[0]
        assert settings.read_text("utf-8") == '{"permissions": {'
        assert "mcp-agents-memory" not in (home / ".claude.json").read_text("utf-8")
        installed = "memory-capture" in (home / ".codex" / "hooks.json").read_text("utf-8")
        assert installed == (action == "install"), action  # the other clients go on


def test_install_says_when_the_commands_are_not_on_path_and_whether_new_shells_find_them(
    home: Path, bin_dir: Path
) -> None:
    """pipx and uv put the commands in a dir that is often not on PATH yet."""
    where = Path(sys.executable).parent  # where this venv's scripts are; PATH is bin_dir only
    first = invoke(home, bin_dir, "install", "--platform", "grok")
    assert "which is not on PATH: run `pipx ensurepath`" in first.output
    (home / ".bashrc").write_text(f'export PATH="$PATH:{where}"\n', encoding="utf-8")
    again = invoke(home, bin_dir, "install", "--platform", "grok")
    assert f"new shells find memory-capture and mcp-agents-memory ({where} is on PATH" in (
        again.output
    )
