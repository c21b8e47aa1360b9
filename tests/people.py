"""The people the protocol doors' tests sign in, by bearer token, and the desk script that asks
a clerk (a channel's question) and the thread's owner at once."""

from __future__ import annotations

from starlette.requests import Request

from agboss.testing import ScriptedTurn, call_tools, tool_call
from agboss.web import Caller
from tests.apps.desk import BookExpenseTool, ReturnDepositTool

PEOPLE = {
    "tok-ada": Caller(owner_id="ada"),
    "tok-bo": Caller(owner_id="bo"),
    "tok-desk": Caller(answered_by="desk"),
}


async def signed_in(request: Request) -> Caller | None:
    """The person a request's bearer token names; ``None`` for none."""
    return PEOPLE.get(request.headers.get("authorization", "").removeprefix("Bearer "))


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


CLERK_AND_OWNER: ScriptedTurn = call_tools(
    tool_call(ReturnDepositTool, lease_id="L-7"),
    tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
)
"""A turn that asks the clerk (the deposit: a channel's question) and ada (the expense)."""
