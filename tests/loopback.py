"""A real HTTP server on loopback that speaks the OpenAI Chat Completions API from a script."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def completion(
    *, content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, **usage: Any
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.get("id", f"call_{index}"),
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for index, call in enumerate(tool_calls)
        ]
    return Reply(
        body={
            "id": "chatcmpl-1",
            "model": "served-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, **usage},
        }
    )


class LoopbackServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                server.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.paths.append(self.path)
                reply = (
                    server.replies.popleft()
                    if server.replies
                    else Reply(500, {"error": "no reply"})
                )
                payload = (
                    json.dumps(reply.body).encode()
                    if not isinstance(reply.body, bytes)
                    else reply.body
                )
                self.send_response(reply.status)
                if "content-type" not in reply.headers:
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def loopback_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def events(*items: tuple[str | None, Any]) -> Reply:
    """A server-sent event stream (``text/event-stream``): each item an event's name (``None``
    for none) and its data (JSON, or text as it is)."""
    lines = []
    for name, data in items:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return Reply(
        body=("\n".join(lines) + "\n").encode(),
        headers={"content-type": "text/event-stream"},
    )


def streamed_completion(*pieces: str, tool_call: dict[str, Any] | None = None) -> Reply:
    """A Chat Completions answer streamed in chunks: the text in ``pieces``, then a tool call
    (its arguments in two parts), then the usage, then ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-s",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "served-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    items: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    items += [(None, chunk({"content": piece})) for piece in pieces]
    if tool_call is not None:
        arguments = json.dumps(tool_call["arguments"])
        half = len(arguments) // 2
        items.append(
            (
                None,
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_s",
                                "type": "function",
                                "function": {
                                    "name": tool_call["name"],
                                    "arguments": arguments[:half],
                                },
                            }
                        ]
                    }
                ),
            )
        )
        items.append(
            (
                None,
                chunk(
                    {"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]},
                    "tool_calls",
                ),
            )
        )
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    items.append(
        (
            None,
            {
                "id": "chatcmpl-s",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "served-model",
                "choices": [],
                "usage": usage,
            },
        )
    )
    items.append((None, "[DONE]"))
    return events(*items)
