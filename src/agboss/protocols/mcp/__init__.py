"""``agboss.protocols.mcp``: workflows served as the tools of an MCP server, their pauses the
protocol's input-required results (2026-07-28).

    from agboss.protocols.mcp import mcp_server

    server = mcp_server(app, [RefundWorkflow], authenticate=authenticate, state_keys=[secret])
    api = server.streamable_http_app()

Needs the ``mcp`` and ``web`` extras: ``pip install 'agboss[mcp,web]'``.
"""

try:
    import mcp  # noqa: F401 - only to say which extra is missing
    import starlette  # noqa: F401
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.protocols.mcp needs the mcp and web extras: pip install 'agboss[mcp,web]'",
        name=missing.name,
    ) from missing

from agboss.protocols.mcp._server import ANSWER_FORM, mcp_server

__all__ = ["ANSWER_FORM", "mcp_server"]
