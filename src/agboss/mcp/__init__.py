"""Tools from MCP servers (``pip install 'agboss[mcp]'``): declared with `McpServer`, listed
at `App.create`, called like any tool — approvals, validation and the journal included.

This package holds the declarations and the DTOs; the connections (on the official ``mcp``
SDK) are opened by `App.create` only when an application declares a server.
"""

from agboss.mcp._arguments import McpArguments, McpToolOutput
from agboss.mcp._input import McpInputRequest
from agboss.mcp._servers import McpHttp, McpServer, McpStdio

__all__ = [
    "McpArguments",
    "McpHttp",
    "McpInputRequest",
    "McpServer",
    "McpStdio",
    "McpToolOutput",
]
