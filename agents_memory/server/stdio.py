"""The stdio transport with an answer for every line.

The MCP SDK's stdio transport (``mcp.server.stdio.stdio_server``) hands a line it cannot parse
to the session as an exception, and the session only logs it at DEBUG: the client gets no
reply and waits for its own timeout. That is what malformed JSON, a lone surrogate
(``"\\ud800"``) or an array nested 50,000 deep produced. :func:`run_stdio` serves the same
transport and the same server, with one step between them: such a line is answered with a
JSON-RPC error (``-32700`` parse error for text that is not JSON, ``-32600`` invalid request
for JSON that is not a JSON-RPC message; ``id`` null, as JSON-RPC 2.0 says when the id cannot
be read), and the server goes on with the next line.
"""

from __future__ import annotations

from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

_REASON_CHARS: Final = 200


def refusal(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error that answers a line the transport could not read."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0]["type"] != "json_invalid":
        fields = ", ".join(".".join(map(str, e["loc"])) or "message" for e in errors[:3])
        code, text = INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({fields})"
    else:
        reason = errors[0]["msg"] if errors else f"{type(exc).__name__}: {exc}"
        code, text = PARSE_ERROR, f"Parse error: {reason}"
    return JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=code, message=text[:_REASON_CHARS])
    )


async def _screen(
    lines: ReadStream[SessionMessage | Exception],
    server_side: MemoryObjectSendStream[SessionMessage | Exception],
    replies: WriteStream[SessionMessage],
) -> None:
    """Pass each parsed message on; answer each unreadable line with its error."""
    async with server_side:
        async for item in lines:
            if isinstance(item, Exception):
                await replies.send(SessionMessage(refusal(item)))
            else:
                await server_side.send(item)


async def run_stdio(server: MCPServer[Any]) -> None:
    """``server.run()`` for stdio, with :func:`_screen` between the transport and the
    server (the SDK's own ``run_stdio_async`` with one more step)."""
    lowlevel = server._lowlevel_server  # what run_stdio_async serves; no public accessor
    async with stdio_server() as (lines, replies):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with receive, anyio.create_task_group() as tasks:
            tasks.start_soon(_screen, lines, send, replies)
            await lowlevel.run(receive, replies, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()
