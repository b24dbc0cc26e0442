"""Capture daemon footprint: CPU % and RSS of ``memory-capture run`` idle over a minute and while
it ingests a burst of new transcripts; plus the ``memory-capture backfill`` process itself
(SPEC §12: ~0 % CPU idle, RSS ≤ 150 MB).

    python -m bench.daemon_footprint [--idle 60] [--burst-turns 50000]

CPU % = (user + system CPU seconds of the process and its children) / wall seconds, sampled
every 0.5 s with psutil; RSS is the process's resident set (peak of the samples).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import psutil

from bench import common, daemon, synth


def sample(
    proc: psutil.Process, seconds: float, until: object = None
) -> tuple[float, float, float]:
    """CPU %, peak RSS MB and final RSS MB of ``proc`` over ``seconds`` (or until ``until()``)."""

    def cpu() -> float:
        t = proc.cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    c0, w0, peak, rss = cpu(), time.monotonic(), 0.0, 0.0
    while time.monotonic() - w0 < seconds:
        if callable(until) and until():
            break
        try:
            rss = proc.memory_info().rss / 1e6
        except psutil.NoSuchProcess:
            break
        peak = max(peak, rss)
        time.sleep(0.5)
    return 100 * (cpu() - c0) / (time.monotonic() - w0), peak, rss


def main() -> None:
    parser = argparse.ArgumentParser(description="capture daemon CPU and RSS")
    parser.add_argument("--idle", type=float, default=60)
    parser.add_argument("--burst-turns", type=int, default=50_000)
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    rows = []
    with common.bench_db() as db:
        url = db.create_database()
        synth.write_platform(db.home, "claude-code", 2000, seed=1)
        with daemon.capture_daemon(db) as proc:
            p = psutil.Process(proc.pid)
            if not daemon.wait_rows(url, 2000, 120):
                raise SystemExit("the daemon did not import the seed history")
            time.sleep(3)
            load = common.load_avg()
            cpu, peak, last = sample(p, args.idle)
            rows.append(
                (f"daemon idle, {args.idle:.0f} s (2k turns stored)", cpu, peak, last, load)
            )
            print(rows[-1], flush=True)
            burst = db.base / "burst"
            synth.write_platform(burst, "codex-cli", args.burst_turns, seed=2)
            load = common.load_avg()
            started = time.monotonic()
            (burst / ".codex").rename(db.home / ".codex")
            target = 2000 + args.burst_turns
            cpu, peak, last = sample(p, 600, until=lambda: daemon.count(url) >= target)
            took = time.monotonic() - started
            rows.append(
                (
                    f"daemon ingesting a burst of {args.burst_turns:,} turns ({took:.0f} s,"
                    f" {args.burst_turns / took:,.0f} turns/s)",
                    cpu,
                    peak,
                    last,
                    load,
                )
            )
            print(rows[-1], flush=True)
            time.sleep(2)
            load = common.load_avg()
            cpu, peak, last = sample(p, args.idle / 2)
            rows.append(
                (
                    f"daemon idle again, {args.idle / 2:.0f} s ({target:,} turns stored)",
                    cpu,
                    peak,
                    last,
                    load,
                )
            )
            print(rows[-1], flush=True)
        synth.write_platform(db.home, "gemini-cli", args.burst_turns, seed=3)
        load = common.load_avg()
        started = time.monotonic()
        bf = subprocess.Popen(
            [daemon.CAPTURE, "backfill"],
            env=db.env(EMBEDDING_BACKEND="none"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _pid, _status, usage = os.wait4(bf.pid, 0)
        bf.returncode = 0
        wall = time.monotonic() - started
        cpu = 100 * (usage.ru_utime + usage.ru_stime) / wall
        peak = last = usage.ru_maxrss / 1000  # kB on Linux
        rows.append(
            (
                f"`memory-capture backfill` process, {args.burst_turns:,} Gemini turns"
                f" ({wall:.0f} s; CPU and peak RSS from wait4)",
                cpu,
                peak,
                last,
                load,
            )
        )
        print(rows[-1], flush=True)
    body = "\n".join(
        [
            start_header,
            "Private embedded server, temp HOME, EMBEDDING_BACKEND=none (the daemon does not"
            " embed). Bar: ~0 % CPU idle, RSS ≤ 150 MB. CPU % is of one core.",
            "",
            common.table(("phase", "CPU %", "peak RSS MB", "last RSS MB", "load 1/5"), rows),
        ]
    )
    print(body)
    common.write_section("Capture daemon footprint", body)


if __name__ == "__main__":
    main()
