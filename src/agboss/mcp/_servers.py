"""What an application declares about an MCP server: how to reach it, and which of its tools
need an approval.

A declaration is a frozen value an agent lists in ``tools=[...]`` (or an application in
``mcp_servers=[...]``). It connects nothing: `App.create` opens every declared server once,
lists its tools and checks the declarations against them with the other wiring rules.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from agboss.enums import OnInterrupted

__all__ = ["McpHttp", "McpServer", "McpStdio"]


@dataclass(frozen=True, slots=True)
class McpStdio:
    """A server started as a subprocess that speaks MCP on its stdin and stdout.

    Attributes:
        command: The program to run.
        args: Its arguments.
        env: Variables added to the SDK's default environment (a safe subset of this
            process's: ``PATH``, ``HOME``…); nothing else of this process's is passed.
        cwd: Its working directory; this process's when ``None``.
    """

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] | None = None
    cwd: str | None = None

    def describe(self) -> str:
        """How the server is reached, as a message names it."""
        return " ".join([self.command, *self.args])


@dataclass(frozen=True, slots=True)
class McpHttp:
    """A server reached over MCP's streamable HTTP transport.

    Attributes:
        url: The server's MCP endpoint (``http://host:port/mcp``).
        headers: Headers sent with every request (an ``Authorization`` token, say).
    """

    url: str
    headers: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """How the server is reached, as a message names it (the URL without credentials)."""
        scheme, _, rest = self.url.partition("://")
        host = rest.rpartition("@")[2] if "@" in rest.split("/", 1)[0] else rest
        return f"{scheme}://{host}" if rest else self.url


@dataclass(frozen=True, slots=True)
class McpServer:
    """An MCP server whose tools an agent's model may call.

    Declared with `McpServer.stdio` or `McpServer.http`; see ``docs/models.md`` ("MCP tools").

    Attributes:
        name: Kebab-case; how errors, traces and the docs name the server.
        transport: How it is reached.
        approvals: Which tools need a decision: (name or ``fnmatch`` pattern, channel) pairs,
            the first pattern a tool's name matches names its channel.
        only: The tools the model is given, as names or patterns; every tool when ``None``.
        prefix: Put before each tool's name as the model sees it (two servers with a tool of
            the same name).
        timeout: How long one call may take before the model reads a timeout.
        connect_timeout: How long starting or reaching the server, and listing its tools, may
            take (at `App.create`, and when a broken connection is opened again).
        on_interrupted: What happens to a call of its tools that may have run but left no
            result; by default ``ASK`` for a tool with a channel, else ``RERUN``.
    """

    name: str
    transport: McpStdio | McpHttp
    approvals: tuple[tuple[str, type[Any]], ...] = ()
    only: tuple[str, ...] | None = None
    prefix: str = ""
    timeout: timedelta | None = field(default=timedelta(seconds=60))
    connect_timeout: timedelta = field(default=timedelta(seconds=30))
    on_interrupted: OnInterrupted | None = None

    @classmethod
    def stdio(
        cls,
        name: str,
        *,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        approvals: Mapping[str, type[Any]] | None = None,
        only: Sequence[str] | None = None,
        prefix: str = "",
        timeout: timedelta | None = timedelta(seconds=60),
        connect_timeout: timedelta = timedelta(seconds=30),
        on_interrupted: OnInterrupted | None = None,
    ) -> McpServer:
        """A server run as a subprocess, spoken to over its stdin and stdout.

        Args:
            name: Kebab-case, unique in the application (``files-mcp``).
            command: The program to run (``sys.executable``, ``npx``, ``uvx``…).
            args: Its arguments.
            env: Variables added to the SDK's default subset of this process's environment.
            cwd: Its working directory.
            approvals: Tool name or ``fnmatch`` pattern → the ``@channel_role`` (approving
                `McpArguments`) or ``@channel`` that decides its calls.
            only: The tools the model is given (names or patterns); every tool when ``None``.
            prefix: Put before each tool's name as the model sees it.
            timeout: How long one call may take; ``None`` for no limit.
            connect_timeout: How long starting or reaching it and listing its tools may take.
            on_interrupted: What happens to a call of its tools cut off mid-call (see
                `OnInterrupted`); by default ``ASK`` for a tool with a channel, else ``RERUN``.
        """
        return cls(
            name=name,
            transport=McpStdio(
                command=command,
                args=tuple(args),
                env=None if env is None else tuple(sorted(env.items())),
                cwd=None if cwd is None else str(cwd),
            ),
            approvals=tuple((approvals or {}).items()),
            only=None if only is None else tuple(only),
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
            on_interrupted=on_interrupted,
        )

    @classmethod
    def http(
        cls,
        name: str,
        *,
        url: str,
        headers: Mapping[str, str] | None = None,
        approvals: Mapping[str, type[Any]] | None = None,
        only: Sequence[str] | None = None,
        prefix: str = "",
        timeout: timedelta | None = timedelta(seconds=60),
        connect_timeout: timedelta = timedelta(seconds=30),
        on_interrupted: OnInterrupted | None = None,
    ) -> McpServer:
        """A server reached over streamable HTTP.

        Args:
            name: Kebab-case, unique in the application (``crm-mcp``).
            url: Its MCP endpoint.
            headers: Sent with every request.
            approvals: Tool name or ``fnmatch`` pattern → the channel that decides its calls.
            only: The tools the model is given (names or patterns); every tool when ``None``.
            prefix: Put before each tool's name as the model sees it.
            timeout: How long one call may take; ``None`` for no limit.
            connect_timeout: How long starting or reaching it and listing its tools may take.
            on_interrupted: What happens to a call of its tools cut off mid-call (see
                `OnInterrupted`); by default ``ASK`` for a tool with a channel, else ``RERUN``.
        """
        return cls(
            name=name,
            transport=McpHttp(url=url, headers=tuple((headers or {}).items())),
            approvals=tuple((approvals or {}).items()),
            only=None if only is None else tuple(only),
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
            on_interrupted=on_interrupted,
        )

    def channel_for(self, tool: str) -> type[Any] | None:
        """The channel that decides a tool's calls (by its name on the server), if any."""
        for pattern, channel in self.approvals:
            if fnmatch.fnmatchcase(tool, pattern):
                return channel
        return None

    def offers(self, tool: str) -> bool:
        """Whether the model is given a tool (by its name on the server)."""
        return self.only is None or any(fnmatch.fnmatchcase(tool, p) for p in self.only)
