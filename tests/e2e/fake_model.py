"""A canned-reply model server for driving the real agent CLIs offline (stdlib only).

Run it as a script inside a loopback-only network namespace::

    python fake_model.py --port 18080 --log requests.jsonl [--setup-loopback]

It speaks just enough of four wire protocols, chosen by the request path:

* Anthropic Messages (Claude Code): ``POST /v1/messages`` (SSE when ``stream`` is true);
* OpenAI Responses (Codex): ``POST /v1/responses`` (SSE);
* OpenAI Chat Completions (OpenCode, Hermes Agent): ``POST /v1/chat/completions`` (SSE chunks
  ending in ``[DONE]`` when ``stream`` is true, else one ``chat.completion``);
* Gemini (Gemini CLI): ``POST /v1beta/models/<m>:streamGenerateContent`` (SSE) and
  ``:generateContent`` (JSON; the CLI's model router asks for JSON matching a schema).

Every request is appended to the log as one JSON line: method, path, parsed body, and what the
server answered (``reply_kind`` ``text`` or ``tool_call``, ``reply_text``, ``tool``). The test
reads that log to see whether the memory brief reached the model and whether our MCP tool's
result came back.

Replies are deterministic. The newest user text is searched for a nonce ``E2E-<hex>``; the
answer is ``FAKE-REPLY to E2E-<hex>.``. When that text contains ``USE_TOOL`` and the request
offers a tool whose name contains ``--tool`` (default ``search_memory``; ``USE_TOOL=<name>`` in
the text names another), the answer is a call to that tool with ``--tool-args`` (for
``save_message``: :data:`SAVE_ARGS`); once the conversation holds the tool's result, the answer
is text again, saying whether the result contained ``--expect`` (``seed_found=yes|no``) without
quoting it. A text with ``USE_PLAN`` makes it call the tools of ``--plan`` instead, one per
answer, in order (the n-th call once the turn holds n-1 results; a tool the request does not
offer ends the plan), then answer ``FAKE-REPLY to E2E-<hex> after the plan.``. When it prints
``READY <port>`` on stdout, it is listening.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

NONCE = re.compile(r"(?:E2E|nonce)-[0-9a-f]{8}")
CHOSEN_TOOL = re.compile(r"USE_TOOL=([A-Za-z_]+)")
SAVE_ARGS = {"role": "user", "message": "A note the model tries to save itself."}
"""The arguments of a ``save_message`` call (``USE_TOOL=save_message``)."""
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Script:
    """What the server does; set from the command line."""

    log: Path
    tool: str = "search_memory"
    tool_args: dict[str, Any] = field(default_factory=dict)
    expect: str = ""
    plan: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """``USE_PLAN``: the tool calls to make, ``(tool name, arguments)``, in order."""


@dataclass(slots=True)
class Reply:
    """One answer: either ``text`` or a call to ``tool`` (with its protocol-specific extras)."""

    text: str = ""
    tool: str | None = None
    namespace: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    tool_result: str | None = None
    """The tool result this answer follows (logged, for the tests to read)."""

    @property
    def kind(self) -> str:
        return "tool_call" if self.tool else "text"


def text_of(value: Any) -> str:
    """All the strings inside a JSON value, joined (for searching)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(text_of(v) for k, v in value.items() if k != "type")
    if isinstance(value, list):
        return " ".join(text_of(v) for v in value)
    return ""


def sample_for_schema(schema: Any) -> Any:
    """The smallest plausible value for a JSON schema (Gemini's router and checkers)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    samples: dict[str, Any] = {"array": [], "integer": 50, "number": 0.5, "boolean": False}
    if kind == "object":
        return {k: sample_for_schema(v) for k, v in (schema.get("properties") or {}).items()}
    return samples.get(kind, "fake")


class Brain:
    """Decides the reply from the newest user text, the offered tools and any tool result."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def decide(
        self,
        user_texts: list[str],
        tools: Iterable[tuple[str, str | None]],
        tool_result: str | None,
        done: int = 0,
    ) -> Reply:
        """``user_texts``: what the user said, oldest first (the newest decides on a tool);
        ``tool_result``: the result of the tool called in this turn, if any; ``done``: how
        many tool results the turn holds."""
        nonces = NONCE.findall(_HOOK_CONTEXT.sub("", " ".join(user_texts)))
        about = f" to {nonces[-1]}" if nonces else ""
        if user_texts and "USE_PLAN" in user_texts[-1]:
            return self.planned(dict(tools), done, about, tool_result)
        if tool_result is not None:
            found = "yes" if self.script.expect and self.script.expect in tool_result else "no"
            text = f"FAKE-REPLY{about} after the tool: seed_found={found}."
            return Reply(text, tool_result=tool_result)
        if user_texts and "USE_TOOL" in user_texts[-1]:
            chosen = CHOSEN_TOOL.search(user_texts[-1])
            wanted = chosen.group(1) if chosen else self.script.tool
            args = SAVE_ARGS if wanted == "save_message" else self.script.tool_args
            for name, namespace in tools:
                if wanted in name:
                    return Reply(tool=name, namespace=namespace, args=dict(args))
        return Reply(f"FAKE-REPLY{about}.")

    def planned(
        self, offered: dict[str, str | None], done: int, about: str, tool_result: str | None
    ) -> Reply:
        """The plan's next call, or the closing text once every call has its result."""
        if done < len(self.script.plan):
            name, args = self.script.plan[done]
            if name in offered:
                return Reply(tool=name, namespace=offered[name], args=dict(args))
            return Reply(f"FAKE-REPLY{about}: the plan's tool {name} is not offered.")
        return Reply(f"FAKE-REPLY{about} after the plan.", tool_result=tool_result)


MAX_TURNS = 50
"""Model answers per server; past it every answer is plain text, so a CLI that loops on tool
calls ends its turn instead of filling the log."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    brain: Brain
    lock = threading.Lock()
    answered = 0

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"[fake-model] {self.command} {self.path}\n")

    # --- plumbing ---------------------------------------------------------------------------

    def _read(self) -> tuple[str, Any]:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        encoding = self.headers.get("content-encoding", "")
        if raw and encoding == "gzip":
            raw = gzip.decompress(raw)
        elif raw and encoding == "zstd":
            import zstandard  # the product depends on it; only Claude Code may send zstd

            raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
        text = raw.decode("utf-8", "replace")
        try:
            return text, json.loads(text) if text else None
        except ValueError:
            return text, None

    def _record(self, body: Any, reply: Reply | None) -> None:
        if reply is not None:
            with self.lock:
                Handler.answered += 1
                if Handler.answered > MAX_TURNS and reply.tool:
                    reply.tool, reply.namespace, reply.text = None, None, "FAKE-REPLY: turn limit."
        entry = {
            "t": time.time(),
            "method": self.command,
            "path": self.path,
            "body": body,
            "reply_kind": reply.kind if reply else None,
            "reply_text": reply.text if reply else None,
            "tool": reply.tool if reply else None,
            "tool_result": reply.tool_result if reply else None,
        }
        with self.lock, self.brain.script.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _json(self, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        head = f"event: {event}\n" if event else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        self.wfile.write(f"{head}data: {payload}\n\n".encode())
        self.wfile.flush()

    # --- routing ----------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record(None, None)
        if self.path.split("?")[0].endswith("/models"):
            return self._json({"models": [], "object": "list", "data": []})
        return self._json({})

    def do_POST(self) -> None:
        raw, body = self._read()
        body = body if isinstance(body, dict) else {}
        path = self.path.split("?")[0]
        counted = {"/messages/count_tokens": "input_tokens", ":countTokens": "totalTokens"}
        for suffix, key in counted.items():
            if path.endswith(suffix):
                self._record(body, None)
                return self._json({key: max(1, len(raw) // 4)})
        if ":streamGenerateContent" in path or ":generateContent" in path:
            return self.gemini(body, stream=":streamGenerateContent" in path)
        routes = {
            "/messages": self.anthropic,
            "/responses": self.openai_responses,
            "/chat/completions": self.chat_completions,
        }
        for suffix, handle in routes.items():
            if path.endswith(suffix):
                return handle(body)
        self._record(body, None)
        return self._json({})

    # --- Anthropic Messages -----------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> None:
        # Claude Code puts hook output in role:"system" messages: read the newest user turn.
        turns = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
        user_texts, results, done = [], [], 0
        for turn in turns:
            content = turn.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            results = [text_of(b.get("content")) for b in blocks if b.get("type") == "tool_result"]
            said = [text_of(b) for b in blocks if b.get("type") == "text"]
            done += len(results)
            if turn.get("role") == "user" and said and not results:
                user_texts.append(" ".join(said))
                done = 0
        tools = [(t.get("name", ""), None) for t in body.get("tools") or []]
        reply = self.brain.decide(user_texts, tools, results[-1] if results else None, done)
        self._record(body, reply)
        if reply.tool:
            args = json.dumps(reply.args)
            start = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}"}
            start |= {"name": reply.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": args}
            stop = "tool_use"
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": reply.text}
            stop = "end_turn"
        message = {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        self._sse_start()
        self._sse({"type": "message_start", "message": message}, "message_start")
        block_start = {"type": "content_block_start", "index": 0, "content_block": start}
        self._sse(block_start, "content_block_start")
        self._sse(
            {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
        )
        self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        end = {"stop_reason": stop, "stop_sequence": None}
        self._sse(
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": 12}},
            "message_delta",
        )
        self._sse({"type": "message_stop"}, "message_stop")

    # --- OpenAI Responses -------------------------------------------------------------------

    def openai_responses(self, body: dict[str, Any]) -> None:
        items = body.get("input", [])
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        tool_result, user_texts, done = None, [], 0
        for item in items:
            if item.get("type") == "function_call_output":
                tool_result = text_of(item.get("output"))
                done += 1
            elif item.get("role") == "user":
                user_texts.append(text_of(item.get("content")))
                tool_result, done = None, 0
        tools: list[tuple[str, str | None]] = []
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace":  # Codex groups MCP tools per server
                tools += [(t.get("name", ""), tool.get("name")) for t in tool.get("tools") or []]
            else:
                tools.append((tool.get("name") or "", None))
        reply = self.brain.decide(user_texts, tools, tool_result, done)
        self._record(body, reply)
        if reply.tool:
            item = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:16]}",
                "call_id": f"call_{uuid.uuid4().hex[:16]}",
                "name": reply.tool,
                "arguments": json.dumps(reply.args),
                "status": "completed",
            }
            if reply.namespace:
                item["namespace"] = reply.namespace
        else:
            part = {"type": "output_text", "text": reply.text, "annotations": []}
            item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 12,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 22,
        }
        response = {
            "id": f"resp_{uuid.uuid4().hex[:20]}",
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model", "fake-model"),
            "status": "completed",
            "output": [item],
            "usage": usage,
        }
        pending = response | {"status": "in_progress", "output": [], "usage": None}
        self._sse_start()
        self._sse({"type": "response.created", "response": pending}, "response.created")
        added = {"type": "response.output_item.added", "output_index": 0, "item": item}
        self._sse(added, "response.output_item.added")
        if not reply.tool:
            delta = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            delta |= {"type": "response.output_text.delta", "delta": reply.text}
            self._sse(delta, "response.output_text.delta")
        done = {"type": "response.output_item.done", "output_index": 0, "item": item}
        self._sse(done, "response.output_item.done")
        self._sse({"type": "response.completed", "response": response}, "response.completed")

    # --- OpenAI Chat Completions -----------------------------------------------------------

    def chat_completions(self, body: dict[str, Any]) -> None:
        tool_result, user_texts, done = None, [], 0
        for message in body.get("messages") or []:
            if message.get("role") == "tool":
                tool_result = text_of(message.get("content"))
                done += 1
            elif message.get("role") == "user":
                user_texts.append(text_of(message.get("content")))
                tool_result, done = None, 0
        tools = [
            ((tool.get("function") or {}).get("name", ""), None) for tool in body.get("tools") or []
        ]
        reply = self.brain.decide(user_texts, tools, tool_result, done)
        self._record(body, reply)
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:20]}",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
        }
        usage = {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}
        finish = "tool_calls" if reply.tool else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool:
            function = {"name": reply.tool, "arguments": json.dumps(reply.args)}
            call = {"id": f"call_{uuid.uuid4().hex[:16]}", "type": "function"}
            message["tool_calls"] = [call | {"function": function}]
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return self._json(
                base | {"object": "chat.completion", "choices": [choice]} | {"usage": usage}
            )
        chunk = base | {"object": "chat.completion.chunk"}
        self._sse_start()
        first = {"role": "assistant", "content": ""}
        self._sse(chunk | {"choices": [{"index": 0, "delta": first, "finish_reason": None}]})
        if reply.tool:
            delta: dict[str, Any] = {"tool_calls": [message["tool_calls"][0] | {"index": 0}]}
        else:
            delta = {"content": reply.text}
        self._sse(chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        last = [{"index": 0, "delta": {}, "finish_reason": finish}]
        self._sse(chunk | {"choices": last, "usage": usage})
        self._sse("[DONE]")
        return None

    # --- Gemini -----------------------------------------------------------------------------

    def gemini(self, body: dict[str, Any], *, stream: bool) -> None:
        tool_result, user_texts, done = None, [], 0
        for content in body.get("contents", []):
            parts = content.get("parts") or []
            answers = [p["functionResponse"] for p in parts if "functionResponse" in p]
            for answer in answers:
                tool_result = text_of(answer.get("response"))
                done += 1
            said = [p["text"] for p in parts if "text" in p and not answers]
            if content.get("role") == "user" and said:
                user_texts += said
                tool_result, done = None, 0
        tools = [
            (declaration.get("name", ""), None)
            for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" and schema:
            # The CLI's model router and next-speaker checks: JSON that fits the schema.
            reply = Reply(json.dumps(sample_for_schema(schema)))
        else:
            reply = self.brain.decide(user_texts, tools, tool_result, done)
        self._record(body, reply)
        if reply.tool:
            call = {"name": reply.tool, "args": reply.args}
            parts: list[dict[str, Any]] = [{"functionCall": call}]
        else:
            parts = [{"text": reply.text}]
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 12}
            | {"totalTokenCount": 22},
            "modelVersion": "gemini-2.5-pro",
            "responseId": uuid.uuid4().hex[:16],
        }
        if not stream:
            return self._json(response)
        self._sse_start()
        return self._sse(response)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--tool", default="search_memory")
    parser.add_argument("--tool-args", default="{}", help="JSON arguments for the tool call")
    parser.add_argument("--expect", default="", help="text the tool result should contain")
    parser.add_argument("--plan", default="[]", help="JSON [[tool, arguments], ...] (USE_PLAN)")
    parser.add_argument(
        "--setup-loopback",
        action="store_true",
        help="run `ip link set lo up` first (the process is the first in a new netns)",
    )
    args = parser.parse_args(argv)
    if args.setup_loopback:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    plan = [(str(name), dict(call)) for name, call in json.loads(args.plan)]
    script = Script(args.log, args.tool, json.loads(args.tool_args), args.expect, plan)
    Handler.brain = Brain(script)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
