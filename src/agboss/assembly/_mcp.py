"""Assembly's rules over MCP servers, and the tools they become.

`App.create` opens every declared server and lists its tools before assembly
(`declared_servers`); the rules here check the declarations against those listings, with the
other wiring rules, and make each offered tool a tool like any other: a generated handler class
whose `ToolSpec` takes the tool's `McpArguments` subclass (the server's input schema) and
answers `McpToolOutput`. The engine, the approvals and the journal then need nothing of MCP.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agboss.assembly._types import reachable
from agboss.assembly._walk import Walk
from agboss.components import (
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentKind,
    ToolSpec,
    interrupted_default,
    spec_of,
)
from agboss.enums import OnInterrupted
from agboss.errors import ToolError
from agboss.mcp import McpArguments, McpServer, McpToolOutput
from agboss.mcp.client import (
    ListedTool,
    McpCalls,
    McpConnections,
    McpListing,
    McpReply,
    McpRound,
    McpSchemaError,
    arguments_model,
    open_servers,
)

__all__ = ["McpRules", "McpTool", "McpWiring", "declared_servers", "open_declared"]

_KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class McpWiring:
    """What `App.create` learnt of the declared servers before assembly.

    Attributes:
        listings: Each server's tools, or why it could not be listed.
        calls: Each server's open connection.
    """

    listings: Mapping[McpServer, McpListing] = field(default_factory=dict)
    calls: Mapping[McpServer, McpCalls] = field(default_factory=dict)


class McpTool:
    """The handler of one MCP tool: its call goes to its server (a subclass per tool)."""

    server: ClassVar[McpServer]
    remote_name: ClassVar[str]
    calls: ClassVar[McpCalls]

    async def run(self, args: McpArguments) -> McpToolOutput:
        """Calls the tool on its server with the validated arguments.

        Raises:
            ToolError: The tool asked a question (the engine calls `run_round` instead).
        """
        done = await self.run_round(args, None, None)
        if isinstance(done, McpRound):
            raise ToolError(f"{self.remote_name} asked a question before it answers")
        return done

    async def run_round(
        self,
        args: McpArguments,
        answers: Mapping[str, McpReply] | None,
        request_state: str | None,
    ) -> McpToolOutput | McpRound:
        """Calls the tool, with the answers to the questions it asked in the round before."""
        return await self.calls.call(self.remote_name, args.values, answers, request_state)


def declared_servers(application: type[Any]) -> list[McpServer]:
    """Every MCP server the application and the agents it reaches declare, once each."""
    found: list[McpServer] = []
    for spec in reachable(application).values():
        if isinstance(spec, AgentSpec):
            found.extend(tool for tool in spec.tools if isinstance(tool, McpServer))
        elif isinstance(spec, ApplicationSpec) and isinstance(spec.mcp_servers, tuple):
            found.extend(server for server in spec.mcp_servers if isinstance(server, McpServer))
    return list(dict.fromkeys(found))


async def open_declared(application: type[Any]) -> tuple[McpConnections | None, McpWiring]:
    """Opens every MCP server the application declares and lists its tools (at once).

    Returns:
        The connections (``None`` when it declares none) and what assembly checks.

    Raises:
        ConfigurationError: It declares a server, but the ``mcp`` SDK is not installed.
    """
    servers = declared_servers(application)
    if not servers:
        return None, McpWiring()
    connections, listings = await open_servers(servers)
    return connections, McpWiring(listings, connections.connections)


class McpRules(Walk):
    """The MCP rules, mixed into the assembler."""

    mcp: McpWiring
    mcp_tools: dict[McpServer, list[type[McpTool]]]

    def check_mcp(self, app_spec: ApplicationSpec) -> None:
        """Checks every declared server against its listing and makes its tools."""
        self.mcp_tools = {}
        servers = []
        for item in app_spec.mcp_servers:
            if isinstance(item, McpServer):
                servers.append(item)
            else:
                self.violate(
                    "mcp.not-a-server",
                    app_spec.name,
                    f"mcp_servers=[...] holds {item!r}; list McpServer.stdio(...) or "
                    "McpServer.http(...) declarations",
                )
        for spec in list(self.components.values()):
            if isinstance(spec, AgentSpec):
                servers.extend(tool for tool in spec.tools if isinstance(tool, McpServer))
        by_name: dict[str, McpServer] = {}
        for server in dict.fromkeys(servers):
            if by_name.setdefault(server.name, server) is not server:
                self.violate(
                    "mcp.duplicate-name",
                    server.name,
                    "names two different MCP server declarations; give each its own name, "
                    "or declare the server once and list that value",
                )
                continue
            self.mcp_tools[server] = self._server_tools(server)
        self._check_agent_tools(app_spec)

    def agent_tool_classes(self, agent: AgentSpec, app_spec: ApplicationSpec) -> list[type[Any]]:
        """An agent's tool classes: its ``@tool`` classes, then its servers' generated ones."""
        classes: list[type[Any]] = []
        for tool in agent.tools:
            if isinstance(tool, McpServer):
                classes.extend(self.mcp_tools.get(tool, ()))
            else:
                classes.append(tool)
        for server in app_spec.mcp_servers:
            if isinstance(server, McpServer) and server not in agent.tools:
                classes.extend(self.mcp_tools.get(server, ()))
        return classes

    # ---- one server ----------------------------------------------------------------

    def _server_tools(self, server: McpServer) -> list[type[McpTool]]:
        if not _KEBAB.match(server.name):
            self.violate(
                "mcp.name",
                server.name or repr(server),
                "an MCP server's name must be kebab-case (e.g. 'files-mcp')",
            )
        for _, channel in server.approvals:
            if spec_of(channel, ChannelRoleSpec) is None and spec_of(channel, ChannelSpec) is None:
                self.violate(
                    "mcp.channel-not-a-channel",
                    server.name,
                    f"approvals names {getattr(channel, '__qualname__', channel)!r}, which is "
                    "neither a @channel_role nor a @channel class",
                )
        listing = self.mcp.listings.get(server)
        if listing is None or listing.failure is not None:
            why = "it was not opened" if listing is None else listing.failure
            self.violate(
                "mcp.unreachable",
                server.name,
                f"could not be listed ({server.transport.describe()}): {why}; check that it "
                "starts (its command and arguments) or answers (its URL) and speaks MCP",
            )
            return []
        names = [tool.name for tool in listing.tools]
        declared = [("approvals", p) for p, _ in server.approvals]
        declared += [("only", p) for p in server.only or ()]
        for kind, pattern in declared:
            if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
                self.violate(
                    "mcp.unknown-tool",
                    server.name,
                    f"{kind} names {pattern!r}, which matches none of its tools "
                    f"({', '.join(names) or 'it lists none'})",
                )
        classes = []
        calls = self.mcp.calls.get(server)
        unasked = [
            tool.name
            for tool in listing.tools
            if server.offers(tool.name) and server.channel_for(tool.name) is None
        ]
        if server.on_interrupted is OnInterrupted.ASK and unasked:
            self.violate(
                "mcp.ask-without-channel",
                server.name,
                f"declares on_interrupted=OnInterrupted.ASK, but {', '.join(unasked)} have no "
                "channel to ask; name one for them in approvals=, or choose RERUN or FAIL",
            )
        for tool in listing.tools:
            if not server.offers(tool.name):
                continue
            made = self._tool_class(server, tool, calls)
            if made is not None:
                classes.append(made)
        return classes

    def _tool_class(
        self, server: McpServer, tool: ListedTool, calls: McpCalls | None
    ) -> type[McpTool] | None:
        label = f"{server.name}:{tool.name}"
        try:
            arguments = arguments_model(label, tool.input_schema)
        except McpSchemaError as error:
            self.violate(
                "mcp.bad-schema",
                label,
                f"lists an input schema that is not valid JSON Schema ({error}); fix the "
                "server's tool, or leave it out with only=[...]",
            )
            return None
        made = type(
            f"McpTool[{label}]",
            (McpTool,),
            {"__module__": __name__, "server": server, "remote_name": tool.name, "calls": calls},
        )
        self.components[made] = ToolSpec(
            kind=ComponentKind.TOOL,
            name=server.prefix + tool.name,
            description=tool.description or f"The tool {tool.name} of {server.name}.",
            input=arguments,
            output=McpToolOutput,
            channel=(channel := server.channel_for(tool.name)),
            timeout=server.timeout,
            on_interrupted=interrupted_default(server.on_interrupted, channel),
        )
        return made

    def _check_agent_tools(self, app_spec: ApplicationSpec) -> None:
        for agent in [s for s in self.components.values() if isinstance(s, AgentSpec)]:
            seen: dict[str, list[str]] = {}
            for cls in self.agent_tool_classes(agent, app_spec):
                spec = self.components.get(cls)
                if isinstance(spec, ToolSpec):
                    owner = cls.server.name if issubclass(cls, McpTool) else "a @tool class"
                    seen.setdefault(spec.name, []).append(owner)
            for name, owners in seen.items():
                if len(owners) > 1:
                    self.violate(
                        "mcp.duplicate-tool",
                        agent.name,
                        f"is given {len(owners)} tools named {name!r} ({', '.join(owners)}); "
                        "give a server prefix=... or leave the tool out with only=[...]",
                    )
