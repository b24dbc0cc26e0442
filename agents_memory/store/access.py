"""Who may reach the embedded server's files: the unprivileged system user PostgreSQL runs as
under root, the private directory its socket may live in. Nothing here changes a permission of
a directory the product did not create (see :mod:`agents_memory.store.embedded`)."""

from __future__ import annotations

import hashlib
import pwd
import stat
import subprocess
from pathlib import Path

from agents_memory.errors import DatabaseError

SYSTEM_USER = "embedded_postgres"
SYSTEM_DIR = Path("/var/lib/mcp-agents-memory")
"""As root: where clusters and binaries go that the system user could not reach elsewhere."""
SOCKET_DIR_RECORD = "mcp-agents-memory-socket-dir"


def ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SYSTEM_USER,
            ],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(SYSTEM_USER)


def walkable(path: Path, entry: pwd.struct_passwd) -> bool:
    """Whether ``entry``'s user may walk through every existing directory above ``path``
    (the server runs with that user's uid and primary gid only, no supplementary groups)."""
    for parent in path.parents:
        try:
            st = parent.stat()
        except FileNotFoundError:
            continue
        if st.st_uid == entry.pw_uid:
            bit = stat.S_IXUSR
        elif st.st_gid == entry.pw_gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def private_system_dir(path: Path) -> None:
    """Create ``path`` root-owned 0711 (walk-through, not listable), or check that an
    existing one is root's and writable by nobody else."""
    try:
        path.mkdir(mode=0o711)
    except FileExistsError:
        st = path.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise DatabaseError(
                f"refusing {path}: it must be a directory owned by root and writable by root "
                f"only (owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o})"
            ) from None
        return
    path.chmod(0o711)


def check_private(path: Path, owner: int) -> None:
    """Refuse a socket directory that is not a real directory of ``owner`` with mode 0700
    (another local user could have made or replaced it to receive our connections)."""
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != owner or st.st_mode & 0o077:
        raise DatabaseError(
            f"refusing the socket directory {path}: it is not a private directory of the "
            f"server's user (owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}); "
            "remove it and start again"
        )


def tree_digest(install: Path) -> str:
    """Names a copy of the wheel's PostgreSQL after the installed files it was made from."""
    st = (install / "bin" / "postgres").stat()
    key = f"{install}:{st.st_size}:{st.st_mtime_ns}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
