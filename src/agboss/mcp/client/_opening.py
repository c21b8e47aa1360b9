"""Opening the declared servers: the official ``mcp`` SDK is imported here, when an application
declares one, and not before (declaring a server needs no SDK)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from agboss.errors import ConfigurationError
from agboss.mcp._servers import McpServer
from agboss.mcp.client._listing import McpCalls, McpListing

__all__ = ["McpConnections", "open_servers"]


class McpConnections(Protocol):
    """Every declared server's open connection, opened together and closed together."""

    @property
    def connections(self) -> Mapping[McpServer, McpCalls]:
        """Each server's open connection."""
        ...

    async def close(self) -> None:
        """Closes them all."""
        ...


async def open_servers(
    servers: Sequence[McpServer],
) -> tuple[McpConnections, dict[McpServer, McpListing]]:
    """Opens every server at once; each listing holds its tools or why it failed.

    Raises:
        ConfigurationError: The ``mcp`` SDK is not installed.
    """
    try:
        from agboss.mcp.client._connection import connect
    except ImportError as missing:
        raise ConfigurationError(
            f"the application declares the MCP server {servers[0].name}, but the mcp SDK is "
            f"not installed ({missing})",
            hint="pip install 'agboss[mcp]'",
        ) from missing
    return await connect(servers)
