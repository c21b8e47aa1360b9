"""One open connection to each declared MCP server, on the official ``mcp`` SDK.

The SDK's `mcp.Client` is an async context manager whose task group must be left by the task
that entered it; an `App` is opened and closed by whichever tasks its user has. So each
connection lives in a task of its own, which enters the client, lists its tools and holds it
open until `McpConnection.close`. Calls are made from any task of the loop. A connection that
broke (its server exited, say) is opened again at the next call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CONNECTION_CLOSED

from agboss.errors import McpCallError, ToolError
from agboss.mcp._arguments import McpToolOutput
from agboss.mcp._input import McpQuestion, McpReply, McpRound
from agboss.mcp._servers import McpHttp, McpServer
from agboss.mcp.client._listing import ListedTool, McpListing

__all__ = ["McpConnection", "SdkConnections", "connect"]

_LOG = logging.getLogger("agboss.mcp")

_BROKEN = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    httpx2.TransportError,
    ConnectionError,
    OSError,
)
"""What a call raises when the connection, not the tool, failed."""


class McpConnection:
    """A declared server's open connection: its tools, and calls to them."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()
        self._closed = False
        self._connect_timeout = server.connect_timeout.total_seconds()

    async def open(self) -> McpListing:
        """Connects and lists the server's tools; a failure is returned, not raised."""
        try:
            async with asyncio.timeout(self._connect_timeout):
                client = await self._connect()
                return McpListing(tools=tuple(await _tools(client)))
        except TimeoutError:
            return McpListing(
                failure=f"it did not start, answer and list its tools within "
                f"{self.server.connect_timeout.total_seconds():g} s (connect_timeout)"
            )
        except Exception as error:  # every way a server can be unreachable is reported alike
            return McpListing(failure=_said(error))

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        answers: Mapping[str, McpReply] | None = None,
        request_state: str | None = None,
    ) -> McpToolOutput | McpRound:
        """Calls one of the server's tools, with the answers to the questions it asked, if it
        asked any (and the state it gave with them).

        Returns:
            What the tool answered, or the questions it asks before it answers.

        Raises:
            ToolError: The tool answered with an error, or the server refused the call: the
                agent's model reads it.
            McpCallError: The server could not be reached, or broke off the call.
        """
        client = await self._connected()
        try:
            result = await client.session.call_tool(
                tool,
                arguments,
                input_responses=None if answers is None else _responses(answers),
                request_state=request_state,
                allow_input_required=True,
            )
        except MCPError as error:
            if error.code != CONNECTION_CLOSED:  # the server's answer: the model reads it
                raise ToolError(f"{tool} was refused by its MCP server: {error}") from error
            raise McpCallError(
                f"the MCP server {self.server.name} closed the connection during the call "
                f"of {tool}",
                server=self.server.name,
            ) from error
        except _BROKEN as error:
            raise McpCallError(
                f"the call of {tool} on the MCP server {self.server.name} failed: {_said(error)}",
                server=self.server.name,
            ) from error
        if isinstance(result, mcp.types.InputRequiredResult):
            return _round_of(result)
        text = _text_of(result.content)
        if result.is_error:
            raise ToolError(text or f"{tool} failed")
        return McpToolOutput(text=text, structured_content=result.structured_content)

    async def close(self) -> None:
        """Closes the connection (and stops a stdio server). Idempotent."""
        self._closed = True
        self._closing.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    # ---- the connection's task -----------------------------------------------------

    async def _connected(self) -> Client:
        async with self._lock:
            if self._closed:
                raise McpCallError(
                    f"the MCP server {self.server.name} is closed: its App was closed",
                    server=self.server.name,
                )
            if self._client is None or self._task is None or self._task.done():
                try:
                    async with asyncio.timeout(self._connect_timeout):
                        await self._connect()
                except Exception as error:
                    raise McpCallError(
                        f"the MCP server {self.server.name} "
                        f"({self.server.transport.describe()}) cannot be reached: {_said(error)}",
                        server=self.server.name,
                    ) from error
            assert self._client is not None
            return self._client

    async def _connect(self) -> Client:
        self._closing = asyncio.Event()
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(ready), name=f"agboss-mcp-{self.server.name}")
        try:
            self._client = await asyncio.shield(ready)
        except BaseException:
            # A server that never finishes its handshake holds the task inside the SDK's
            # connect: it is cancelled, not asked to close.
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            if ready.done() and not ready.cancelled():
                ready.exception()  # read: the error is raised from here, not logged as lost
            raise
        return self._client

    async def _hold(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(_client_of(self.server, stack))
                if not ready.done():
                    ready.set_result(client)
                await self._closing.wait()
        except BaseException as error:
            if not ready.done():
                if isinstance(error, Exception):
                    ready.set_exception(error)
                else:
                    ready.cancel()
            elif not self._closing.is_set():
                _LOG.warning("mcp.disconnected: the MCP server %s: %r", self.server.name, error)
            if not isinstance(error, Exception):
                raise
        finally:
            self._client = None


class SdkConnections:
    """Every declared server's connection on the SDK, opened together and closed together
    (`McpConnections`)."""

    def __init__(self, connections: dict[McpServer, McpConnection]) -> None:
        self.connections = connections

    async def close(self) -> None:
        """Closes them all."""
        await asyncio.gather(*(c.close() for c in self.connections.values()))


async def connect(
    servers: Sequence[McpServer],
) -> tuple[SdkConnections, dict[McpServer, McpListing]]:
    """Opens every server at once; each listing holds its tools or why it failed."""
    connections = {server: McpConnection(server) for server in dict.fromkeys(servers)}
    listings = await asyncio.gather(*(c.open() for c in connections.values()))
    return SdkConnections(connections), dict(zip(connections, listings, strict=True))


def _client_of(server: McpServer, stack: AsyncExitStack) -> Client:
    transport = server.transport
    if isinstance(transport, McpHttp):
        http = httpx2.AsyncClient(
            headers=dict(transport.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        stack.push_async_callback(http.aclose)
        return Client(
            streamable_http_client(transport.url, http_client=http),
            elicitation_callback=_decline,
        )
    return Client(
        StdioServerParameters(
            command=transport.command,
            args=list(transport.args),
            env=None if transport.env is None else dict(transport.env),
            cwd=transport.cwd,
        ),
        elicitation_callback=_decline,
    )


async def _tools(client: Client) -> list[ListedTool]:
    found: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(1000):  # a paginator that never ends cannot hang App.create
        page = await client.list_tools(cursor=cursor)
        found.extend(
            ListedTool(tool.name, tool.description or "", dict(tool.input_schema))
            for tool in page.tools
        )
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


def _round_of(result: mcp.types.InputRequiredResult) -> McpRound:
    questions: list[McpQuestion] = []
    other: list[str] = []
    for key, request in (result.input_requests or {}).items():
        params = getattr(request, "params", None)
        if isinstance(params, mcp.types.ElicitRequestFormParams):
            schema = dict(params.requested_schema)
            questions.append(McpQuestion(key=key, message=params.message, requested_schema=schema))
        elif isinstance(params, mcp.types.ElicitRequestURLParams):
            other.append("a URL to open (URL elicitation)")
        else:
            other.append(f"{request.method} (not an elicitation)")
    return McpRound(
        questions=tuple(questions),
        request_state=result.request_state,
        unsupported=", ".join(other) or None,
    )


def _responses(answers: Mapping[str, McpReply]) -> dict[str, mcp.types.InputResponse]:
    return {
        key: mcp.types.ElicitResult(action=reply.action, content=reply.content)
        for key, reply in answers.items()
    }


async def _decline(
    context: ClientRequestContext, params: mcp.types.ElicitRequestParams
) -> mcp.types.ElicitResult:
    # A server on an older protocol asks in-band, mid-call, where no pause can wait: the
    # question is declined (protocol 2026-07-28 asks between calls, which a pause can hold).
    return mcp.types.ElicitResult(action="decline")


def _text_of(content: Sequence[mcp.types.ContentBlock]) -> str:
    parts: list[str] = []
    for block in content:
        if isinstance(block, mcp.types.TextContent):
            parts.append(block.text)
        else:
            kind = getattr(block, "mime_type", None) or getattr(block, "mimeType", None)
            parts.append(f"[{block.type}{' ' + kind if kind else ''}]")
    return "\n".join(parts)


def _said(error: BaseException) -> str:
    """An error as one line; an exception group by its first leaf (anyio wraps them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
