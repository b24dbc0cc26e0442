"""Capture latency: a turn appended to a transcript → its row visible in the database, with
``memory-capture run`` running (SPEC §12: p95 ≤ 1 s; default debounce 200 ms).

    python -m bench.capture_latency [--appends 40] [--sessions 3]

Claude Code lines are appended (one write + flush each, like the client) to live session files
in a temp HOME, round-robin over ``--sessions`` files, 0.3-0.8 s apart; each is timed from the
write to the moment a poll (every 5 ms, on one connection) sees its ``external_uuid``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import uuid
from datetime import UTC, datetime

import psycopg

from bench import common, daemon


def line(session: str, n: int) -> tuple[bytes, str]:
    uid = str(uuid.uuid4())
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/proj",
        "sessionId": session,
        "version": "2.1.332",
        "type": "user",
        "message": {
            "role": "user",
            "content": f"capture latency probe {n}: please check the cursor handling in the tailer",
        },
        "uuid": uid,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    return (json.dumps(record) + "\n").encode(), f"claude-code:{session}:{uid}"


def main() -> None:
    parser = argparse.ArgumentParser(description="append → searchable latency")
    parser.add_argument("--appends", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=3)
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    rng = random.Random(0)
    times: list[float] = []
    missed = 0
    with common.bench_db() as db:
        url = db.create_database()
        projects = db.home / ".claude/projects/-work-proj"
        projects.mkdir(parents=True)
        sessions = [
            str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(args.sessions)
        ]
        for s in sessions:
            (projects / f"{s}.jsonl").write_bytes(line(s, -1)[0])
        with daemon.capture_daemon(db), psycopg.connect(url, autocommit=True) as conn:
            if not daemon.wait_rows(url, args.sessions, 180):
                raise SystemExit("the daemon did not capture the seed lines within 180 s")
            load = common.load_avg()
            key_probe = conn.execute("SELECT external_uuid FROM memory LIMIT 1").fetchone()
            print("key form:", key_probe[0] if key_probe else None)
            for n in range(args.appends):
                s = sessions[n % len(sessions)]
                data, _key = line(s, n)
                text = json.loads(data)["message"]["content"]
                with (projects / f"{s}.jsonl").open("ab") as handle:
                    handle.write(data)
                    handle.flush()
                    started = time.perf_counter()
                deadline = started + 10
                while time.perf_counter() < deadline:
                    if conn.execute("SELECT 1 FROM memory WHERE message = %s", (text,)).fetchone():
                        times.append(time.perf_counter() - started)
                        break
                    time.sleep(0.005)
                else:
                    missed += 1
                time.sleep(rng.uniform(0.3, 0.8))
            load_end = common.load_avg()
    s = common.summary_ms(times)
    body = "\n".join(
        [
            start_header,
            "`memory-capture run` (defaults: CAPTURE_DEBOUNCE_MS 200, CAPTURE_RESCAN_SEC 30),"
            " private embedded server, temp HOME. Bar: p95 ≤ 1 s.",
            "",
            common.table(
                (
                    "appends",
                    "p50 ms",
                    "p95 ms",
                    "p99 ms",
                    "max ms",
                    "not seen in 10 s",
                    "load 1/5 start",
                    "load 1/5 end",
                ),
                [(s["n"], s["p50"], s["p95"], s["p99"], s["max"], missed, load, load_end)],
            ),
            "",
            "Baseline: the configured debounce alone is 200 ms (the floor of this design).",
        ]
    )
    print(body)
    common.write_section("Capture latency (append → searchable)", body)


if __name__ == "__main__":
    main()
