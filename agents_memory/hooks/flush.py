"""``memory-capture hook flush``: nudge the running capture daemon to read a transcript now.

A datagram to the daemon's Unix socket, nothing more: no capture happens in the hook, it
returns at once, and it is silent when no daemon listens.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

MAX_DATAGRAM = 4096


def message_from_stdin(stdin_text: str) -> bytes:
    """The transcript path from the client's hook JSON (or an empty nudge = rescan)."""
    try:
        event = json.loads(stdin_text) if stdin_text.strip() else {}
    except ValueError:
        event = {}
    path = event.get("transcript_path") if isinstance(event, dict) else None
    return path.encode()[:MAX_DATAGRAM] if isinstance(path, str) else b""


def send_nudge(socket_path: Path, message: bytes) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            sock.sendto(message, str(socket_path))
    except OSError:
        return False
    return True


def run() -> None:
    from agents_memory.paths import capture_socket_path

    try:
        stdin_text = sys.stdin.read() if not sys.stdin.isatty() else ""
        send_nudge(capture_socket_path(), message_from_stdin(stdin_text))
    except Exception:
        return
