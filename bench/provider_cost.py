"""What a provider on an official SDK adds to the pause cycle: the same cycle on the scripted
function provider (no HTTP), and on `OpenAIProvider` (Chat Completions, the Responses API) and
`AnthropicProvider` against a real HTTP server on loopback that speaks each wire format, beside
a bare httpx POST of the same Chat Completions body (what the 0.1 provider did by hand).

The cycle of ``pause_resume.py`` (execute until an approval pauses, resume it, finish: two model
calls) on a SQLite file. Each side runs in alternating blocks, so that the machine's drift hits
all alike; the per-call figure is (side − function provider) / 2 calls.

    PYTHONPATH=. python bench/provider_cost.py [--cycles 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from agboss import App, ExecutionStatus, FunctionProvider
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatModel, ChatRequest, ChatResponse, ModelProvider, ToolCall, Usage
from agboss.models._decisions import DecisionModel
from agboss.models.anthropic import AnthropicProvider
from agboss.models.openai import OpenAIApi, OpenAIProvider
from agboss.models.openai._chat import chat_arguments
from bench.pause_resume import RefundApplication, RefundWorkflow, scripted

_CALL = {"name": "refund-tool", "arguments": {"order_id": "7"}}
_ANSWER = {"name": ANSWER_TOOL, "arguments": {"text": "refunded"}}


def _answered(body: dict[str, Any]) -> bool:
    """Whether the conversation holds the tool's result: then the model answers."""
    text = json.dumps(body.get("messages") or body.get("input") or [])
    return '"tool"' in text or "function_call_output" in text or "tool_result" in text


def _reply(path: str, body: dict[str, Any]) -> dict[str, Any]:
    call = _ANSWER if _answered(body) else _CALL
    arguments = json.dumps(call["arguments"])
    if path.endswith("/chat/completions"):
        tool_call = {
            "id": "c1",
            "type": "function",
            "function": {"name": call["name"], "arguments": arguments},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        return {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    if path.endswith("/responses"):
        item = {
            "type": "function_call",
            "id": "f1",
            "call_id": "c1",
            "name": call["name"],
            "arguments": arguments,
            "status": "completed",
        }
        return {
            "id": "r",
            "object": "response",
            "created_at": 0,
            "model": "m",
            "status": "completed",
            "output": [item],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        }
    block = {"type": "tool_use", "id": "t1", "name": call["name"], "input": call["arguments"]}
    return {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [block],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


@contextmanager
def loopback() -> Iterator[str]:
    """A server on loopback answering each API's wire format from the conversation."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real APIs
        disable_nagle_algorithm = True  # headers and body leave at once, as a real server's

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            payload = json.dumps(_reply(self.path, json.loads(self.rfile.read(length)))).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class HttpxProvider:
    """The baseline: the same Chat Completions body POSTed with httpx, read by hand."""

    serves = ("*",)

    def __init__(self, base_url: str) -> None:
        self.client = httpx.AsyncClient(base_url=base_url)

    def chat_model(self, model: str) -> ChatModel:
        return _HttpxModel(self.client, model)

    def decision_model(self, model: str) -> DecisionModel | None:
        return None

    async def aclose(self) -> None:
        await self.client.aclose()


class _HttpxModel:
    def __init__(self, client: httpx.AsyncClient, model: str) -> None:
        self.client, self.model = client, model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        answer = await self.client.post(
            "/v1/chat/completions", json=chat_arguments(self.model, request)
        )
        message = answer.json()["choices"][0]["message"]
        return ChatResponse(
            tool_calls=tuple(
                ToolCall(
                    id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"]
                )
                for c in message["tool_calls"]
            ),
            usage=Usage(calls=1),
        )


async def cycles(app: App, count: int) -> list[float]:
    times = []
    for _ in range(count):
        began = time.perf_counter()
        paused = await app.execute(RefundWorkflow, {"text": "refund 7"}, owner_id="u")
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        done = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
        times.append(time.perf_counter() - began)
        assert done.status is ExecutionStatus.COMPLETED
    return times


async def main(count: int, blocks: int) -> None:
    with loopback() as base, tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        providers: dict[str, ModelProvider] = {
            "function provider (no HTTP)": FunctionProvider(scripted),
            "httpx POST, by hand": HttpxProvider(base),
            "OpenAIProvider, Chat Completions": OpenAIProvider(base_url=f"{base}/v1"),
            "OpenAIProvider, Responses": OpenAIProvider(
                base_url=f"{base}/v1", api=OpenAIApi.RESPONSES
            ),
            "AnthropicProvider, Messages": AnthropicProvider(
                base_url=base, api_key="k", serves=("*",)
            ),
        }
        apps: dict[str, App] = {}
        for index, (label, provider) in enumerate(providers.items()):
            apps[label] = await App.create(
                RefundApplication, store=Path(name) / f"{index}.db", providers=[provider]
            )
            await cycles(apps[label], 20)  # warm-up: connections made, code paths loaded
        times: dict[str, list[float]] = {label: [] for label in apps}
        for _ in range(blocks):
            for label, app in apps.items():
                times[label] += await cycles(app, count // blocks)
        for app in apps.values():
            await app.close()
        for provider in providers.values():
            await provider.aclose()
    base_median = statistics.median(times["function provider (no HTTP)"])
    print(f"pause cycle (two model calls) on SQLite, {count} cycles each, {blocks} blocks")
    for label, measured in times.items():
        median = statistics.median(measured)
        per_call = (median - base_median) / 2 * 1000
        print(f"{label:36} median {median * 1000:7.3f} ms   per model call +{per_call:6.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=20)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.cycles, arguments.blocks))
