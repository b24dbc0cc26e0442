"""Shared bench plumbing: a private embedded PostgreSQL, a temp HOME, machine facts, figures
and the RESULTS.md section writer.

Every bench starts its own server in a temp dir and stops it at the end; nothing touches the
user's data dir or home (the product is always pointed at a temp HOME and DATABASE_URL).
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings, load_settings
from agents_memory.store import migrate, vectors
from agents_memory.store.embedded import EmbeddedServer, ServerInfo

RESULTS = Path(__file__).with_name("RESULTS.md")
MODEL = "multilingual-e5-small-q4"
DIM = 384
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "am-bench-cache"


@dataclass
class BenchDB:
    """A private embedded server in a temp dir plus a temp HOME."""

    base: Path
    server: EmbeddedServer
    info: ServerInfo

    @property
    def home(self) -> Path:
        return self.base / "home"

    def url(self, dbname: str = "bench") -> str:
        return self.info.conninfo(dbname)

    def create_database(self, dbname: str = "bench", *, vector: bool = True) -> str:
        with psycopg.connect(self.info.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{dbname}"')
        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            migrate.migrate(conn)
            if vector:
                vectors.ensure_embedding_column(conn, MODEL, DIM)
        return self.url(dbname)

    def settings(self, dbname: str = "bench", **overrides: Any) -> Settings:
        overrides.setdefault("database_url", self.url(dbname))
        overrides.setdefault("memory_data_dir", self.base / "data")
        overrides.setdefault("user_name", "bench")
        overrides.setdefault("device_name", "bench-device")
        return load_settings(env_file=self.base / "absent.env", **overrides)

    def env(self, dbname: str = "bench", **extra: str) -> dict[str, str]:
        """Environment for product subprocesses: temp HOME, this database, no user config."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PG", "DATABASE_URL", "DB_", "MEMORY_", "EMBEDDING_", "CAPTURE_"))
        }
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local/share"),
            XDG_STATE_HOME=str(self.home / ".local/state"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            MEMORY_CONFIG_PATH=str(self.base / "absent.env"),
            DATABASE_URL=self.url(dbname),
            USER_NAME="bench",
            DEVICE_NAME="bench-device",
        )
        env.update(extra)
        return env


@contextlib.contextmanager
def bench_db(conf: dict[str, str] | None = None, keep: Path | None = None) -> Iterator[BenchDB]:
    """Start a private embedded server (extra ``postgresql.conf`` settings in ``conf``), in a
    temp dir removed afterwards, or in ``keep`` (created when missing) whose cluster stays."""
    base = keep if keep is not None else Path(tempfile.mkdtemp(prefix="am-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)  # walk-through for the server's user when run as root
    (base / "home").mkdir(parents=True, exist_ok=True)
    server = EmbeddedServer(base / "cluster")
    info = server.start()
    try:
        if conf:
            with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
                for key, value in conf.items():
                    conn.execute(f"ALTER SYSTEM SET {key} = '{value}'")
                conn.execute("SELECT pg_reload_conf()")
        yield BenchDB(base, server, info)
    finally:
        server.stop()
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)


# --- machine and figures --------------------------------------------------------------------


def load_avg() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def machine() -> str:
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError):
        kb = int(Path("/proc/meminfo").read_text(encoding="utf-8").split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GB"
    return f"{cpu}, {os.cpu_count()} cores, {mem} RAM, Python {platform.python_version()}"


def pg_versions(url: str) -> str:
    with psycopg.connect(url) as conn:
        pg = conn.execute("SHOW server_version").fetchone()
        vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
        sb = conn.execute("SHOW shared_buffers").fetchone()
        wm = conn.execute("SHOW work_mem").fetchone()
    return (
        f"PostgreSQL {pg[0] if pg else '?'}, pgvector {vec[0] if vec else '-'},"
        f" shared_buffers {sb[0] if sb else '?'}, work_mem {wm[0] if wm else '?'}"
    )


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear interpolation."""
    data = sorted(values)
    if not data:
        return float("nan")
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50": pct(ms, 50),
        "p95": pct(ms, 95),
        "p99": pct(ms, 99),
        "mean": statistics.fmean(ms) if ms else float("nan"),
        "max": max(ms) if ms else float("nan"),
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def header(command: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"Measured {now} on {machine()}; load average (1/5 min) at start {load_avg()}.\n\n" + (
        f"Command: `{command}`\n"
    )


def command_line() -> str:
    return "python -m " + Path(sys.argv[0]).stem.join(["bench.", ""]) + " " + " ".join(sys.argv[1:])


def write_section(name: str, body: str) -> None:
    """Replace (or append) the ``## name`` section of bench/RESULTS.md."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    block = f"## {name}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block + "\n", text).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    RESULTS.write_text(text, encoding="utf-8")


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - started, result


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=False, capture_output=True, text=True, **kwargs)
