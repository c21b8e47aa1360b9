"""What the rest of agboss uses of MCP (internal: the user's names are `agboss.mcp`'s): the
listing `App.create` learns, the connections it opens (on the SDK, imported only then), the
rounds a tool's questions make, and the argument models built from a tool's schema."""

from agboss.mcp._arguments import McpSchemaError, arguments_model
from agboss.mcp._input import McpReply, McpRound, answer_model
from agboss.mcp.client._listing import ListedTool, McpCalls, McpListing
from agboss.mcp.client._opening import McpConnections, open_servers

__all__ = [
    "ListedTool",
    "McpCalls",
    "McpConnections",
    "McpListing",
    "McpReply",
    "McpRound",
    "McpSchemaError",
    "answer_model",
    "arguments_model",
    "open_servers",
]
