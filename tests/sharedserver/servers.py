"""A PostgreSQL server run the way a shared or managed one is: its own cluster, started
separately from the product, reached over TCP as a role that owns only its database.

The cluster runs as an unprivileged user under root (PostgreSQL refuses root): the product's
own system user, which the embedded tests use too. TLS material is made with the ``openssl``
command line: a CA, and a server certificate for ``localhost`` and ``127.0.0.1``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

from agents_memory.store import access

DEBIAN_PG15 = Path("/usr/lib/postgresql/15/bin")
ADMIN = "postgres"
ROLE = "memuser"
PASSWORD = "memory-pw-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """One cluster in ``base/data`` run with the binaries in ``bin_dir``."""

    bin_dir: Path
    base: Path
    port: int
    user: pwd.struct_passwd | None

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def sockets(self) -> Path:
        return self.base / "sock"

    @property
    def socket_file(self) -> Path:
        return self.sockets / f".s.PGSQL.{self.port}"

    def admin_conninfo(self, dbname: str = "postgres") -> str:
        """The superuser over the Unix socket (trust): what the test's "admin" uses."""
        host = quote(str(self.sockets), safe="")
        return f"postgresql://{ADMIN}@/{dbname}?host={host}&port={self.port}"

    def initdb(self, locale_options: list[str]) -> None:
        for path in (self.data, self.sockets):
            path.mkdir(mode=0o700)
            self.give(path)
        self.run(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data),
                "--auth-local=trust",
                "--auth-host=reject",
                "-U",
                ADMIN,
                "--encoding=UTF8",
                *locale_options,
                "--no-instructions",
            ]
        )

    def configure(self, conf: str, hba: str, *, listen: str = "127.0.0.1") -> None:
        """Append to ``postgresql.conf``; replace ``pg_hba.conf`` (its ``hba`` lines first,
        then the admin's trust over the Unix socket)."""
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as handle:
            handle.write(
                f"\nlisten_addresses = '{listen}'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.sockets}'\n"
                "unix_socket_permissions = 0700\n"
                "password_encryption = 'scram-sha-256'\n" + conf
            )
        (self.data / "pg_hba.conf").write_text(hba + "local all all trust\n", encoding="utf-8")

    def start(self) -> None:
        log = self.data / "server.log"
        try:
            self.run(
                [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(log), "start"]
            )
        except subprocess.CalledProcessError as exc:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {exc.stderr}\n{tail}") from exc

    def stop(self) -> None:
        self.run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-m", "fast", "stop"])

    def give(self, path: Path) -> None:
        """Hand ``path`` to the server's user (as root)."""
        if self.user is not None:
            os.chown(path, self.user.pw_uid, self.user.pw_gid)

    def run(self, argv: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "LC_"))}
        env["LANG"] = "C.UTF-8"
        drop: dict[str, object] = (
            {"user": self.user.pw_name, "group": self.user.pw_gid, "extra_groups": []}
            if self.user is not None
            else {}
        )
        subprocess.run(  # type: ignore[call-overload]
            argv, **drop, env=env, cwd="/", check=True, capture_output=True, text=True, timeout=120
        )


def server_user() -> pwd.struct_passwd | None:
    """The unprivileged user the server runs as under root; ``None`` when not root."""
    return access.ensure_system_user() if os.geteuid() == 0 else None


def reachable_binaries(bin_dir: Path, base: Path, user: pwd.struct_passwd | None) -> Path:
    """``bin_dir``, or a copy of its installation in ``base`` when ``user`` cannot reach it."""
    if user is None or access.walkable(bin_dir / "pg_ctl", user):
        return bin_dir
    copy = base / "pginstall"
    shutil.copytree(bin_dir.parent, copy, symlinks=True)
    return copy / "bin"


EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def make_ca(directory: Path) -> Path:
    """A self-signed CA in ``directory``; returns its certificate (its key is ``ca.key``)."""
    directory.mkdir(exist_ok=True)
    ca_crt = directory / "ca.crt"
    _openssl(["req", "-x509", *EC_KEY, "-keyout", directory / "ca.key", "-out", ca_crt,
              "-days", "2", "-subj", f"/CN={directory.name} test CA"])  # fmt: skip
    return ca_crt


def make_tls(directory: Path, owner: Cluster) -> Path:
    """A CA, and a server key and certificate it signed for ``localhost`` and ``127.0.0.1``,
    copied into the cluster for the server's user (the key 0600); returns the CA certificate."""
    ca_crt = make_ca(directory)
    key, csr, crt = directory / "server.key", directory / "server.csr", directory / "server.crt"
    _openssl(["req", "-new", *EC_KEY, "-keyout", key, "-out", csr, "-subj", "/CN=localhost"])
    ext = directory / "san.ext"
    ext.write_text("subjectAltName = DNS:localhost, IP:127.0.0.1\n", encoding="utf-8")
    _openssl(["x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", directory / "ca.key",
              "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext])  # fmt: skip
    for source in (key, crt):
        placed = owner.data / source.name
        shutil.copy(source, placed)
        placed.chmod(0o600)
        owner.give(placed)
    return ca_crt


def _openssl(args: list[object]) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)


def provision(cluster: Cluster, database: str, *, vector: bool) -> None:
    """What an admin of a managed service does: a database owned by the role (which owns
    nothing else and may not create databases or roles), and pgvector created in it."""
    with psycopg.connect(cluster.admin_conninfo(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database} TEMPLATE template0 ENCODING UTF8")
        conn.execute(f"ALTER DATABASE {database} OWNER TO {ROLE}")
    if vector:
        with psycopg.connect(cluster.admin_conninfo(database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")


def create_role(cluster: Cluster) -> None:
    with psycopg.connect(cluster.admin_conninfo(), autocommit=True) as conn:
        conn.execute(
            f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '{PASSWORD}'"
        )
