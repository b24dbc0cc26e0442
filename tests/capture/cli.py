"""Running ``memory-capture`` as a user does: a subprocess with a home of its own, optionally
as another (non-root) user, so that file permissions apply."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def capture_env(home: Path, db_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of a user whose home is ``home``; ``db_url`` ``None``: the embedded
    database under ``home/.data``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.isupper()
        and not k.startswith(
            ("DB_", "DATABASE_URL", "HOOK_", "EMBEDDING_", "MEMORY_", "COLD_", "CAPTURE_")
        )
        and k != "COLUMNS"
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        XDG_DATA_HOME=str(home / ".data"),
        USER_NAME="tester",
        DEVICE_NAME="test-device",
        EMBEDDING_BACKEND="none",
    )
    if db_url is not None:
        env["DATABASE_URL"] = db_url
    env.update(extra)
    return env


def memory_capture(
    home: Path, db_url: str | None, *args: str, user: str | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``memory-capture <args>`` under ``home`` (as ``user`` when given: we run as root;
    ``extra`` adds to the environment)."""
    drop: dict[str, object] = {}
    if user is not None:
        other = pwd.getpwnam(user)
        drop = {"user": other.pw_uid, "group": other.pw_gid, "extra_groups": []}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [str(BIN / "memory-capture"), *args],
        env=capture_env(home, db_url, **extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=home,
        **drop,
    )
