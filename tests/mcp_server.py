"""A real MCP server for the tests, written with the official SDK: an order desk.

Run over stdio (``python -m tests.mcp_server``) or streamable HTTP
(``python -m tests.mcp_server http PORT``). Every call it runs is appended, as a JSON line, to
the file ``AGBOSS_MCP_CALLS`` names, so a test reads what the server really received (and, as
``tool <name>``, to the crash harness's ``AGBOSS_TEST_RUNS``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, Field

# A key of its own (from the test) lets a question outlive the server's process: a stdio
# server started again by a restarted app still reads the request_state it sealed.
_KEY = os.environ.get("AGBOSS_MCP_STATE_KEY")
server = MCPServer(
    "order-desk",
    log_level="WARNING",
    request_state_security=None
    if _KEY is None
    else RequestStateSecurity(keys=[_KEY], ttl=86400.0, bind_principal=None),
)


def _ran(tool: str, **arguments: object) -> None:
    path = os.environ.get("AGBOSS_MCP_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as calls:
            calls.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
    runs = os.environ.get("AGBOSS_TEST_RUNS")
    if runs:  # the crash harness's runs file: "tool <name> pid=<pid>"
        with open(runs, "a", encoding="utf-8") as lines:
            lines.write(f"tool {tool} pid={os.getpid()}\n")


@server.tool()
def lookup_order(order_id: Annotated[str, Field(pattern=r"^o-\d+$")]) -> dict[str, object]:
    """Looks an order up by its id (o-<digits>)."""
    _ran("lookup_order", order_id=order_id)
    return {"order_id": order_id, "total": 120.0, "status": "delivered"}


@server.tool()
def refund_order(
    order_id: Annotated[str, Field(pattern=r"^o-\d+$")],
    amount: Annotated[float, Field(gt=0, le=500)],
) -> str:
    """Refunds part or all of an order (at most 500)."""
    _ran("refund_order", order_id=order_id, amount=amount)
    return f"refunded {amount:.2f} on {order_id}"


@server.tool()
def close_account(customer: str) -> str:
    """Closes a customer's account."""
    _ran("close_account", customer=customer)
    if customer == "vip":
        raise ValueError("a VIP account is closed by a person")
    return f"closed {customer}"


class Confirmation(BaseModel):
    sure: bool


def _confirmed(customer: str) -> Elicit[Confirmation]:
    return Elicit(f"Really erase everything {customer} ever ordered?", Confirmation)


@server.tool()
def erase_history(customer: str, confirmation: Annotated[Confirmation, Resolve(_confirmed)]) -> str:
    """Erases a customer's order history, once the person confirms (MCP elicitation)."""
    _ran("erase_history", customer=customer, sure=confirmation.sure)
    return f"erased {customer}" if confirmation.sure else "kept"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
