"""A scripted stand-in for the desk agents' model, so the examples run with no key or network.

It reads the request the way a model would have to: it finds leases (``L-7``) and expenses
(``taxi 12.50``) in the user's words, calls the tools for them, then sums up their results.
"""

from __future__ import annotations

import json
import re

from agboss import FunctionProvider
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall, Usage

_LEASE = re.compile(r"\b(L-\d+)\b")
_TOKEN = re.compile(r"<IBAN_\d+>")
_EXPENSE = re.compile(r"\b(taxi|train|hotel|lunch|dinner)\b(?:\D{0,20}?(\d+(?:[.,]\d+)?))?", re.I)


def _usage(request: ChatRequest) -> Usage:
    sent = sum(len(message.content) for message in request.messages)
    return Usage(input_tokens=sent // 4, output_tokens=20, calls=1)


def _said(result: str) -> str:
    if result.startswith("Tool error: "):
        return result.removeprefix("Tool error: ")
    try:
        return str(json.loads(result).get("status", result))
    except ValueError:
        return result


_NO = re.compile(r"\b(no|not|don'?t|reject|never|stop)\b", re.I)
_YES = re.compile(r"\b(yes|ok|okay|sure|fine|go|approve[d]?|do it)\b", re.I)
_HALF = re.compile(r"\bhalf\b", re.I)
_AMOUNT = re.compile(r"(\d+(?:[.,]\d+)?)")


def read_reply(request: ChatRequest) -> ChatResponse:
    """A reply interpreter's turn: the owner's words read as an approval decision."""
    text = next(m.content for m in request.messages if m.role is MessageRole.USER)
    ask_text, _, reply = text.partition("### reply\n")
    arguments = json.loads(ask_text.removeprefix("### ask\n"))["arguments"]
    decision: dict[str, object] | None = None
    if _NO.search(reply):
        decision = {"approved": False, "reason": reply.strip()}
    elif _HALF.search(reply) and "amount" in arguments:
        decision = {
            "approved": True,
            "override_arguments": {**arguments, "amount": arguments["amount"] / 2},
        }
    elif _YES.search(reply):
        amount = _AMOUNT.search(reply)
        changed = (
            {**arguments, "amount": float(amount.group(1).replace(",", "."))}
            if amount and "amount" in arguments
            else None
        )
        decision = {"approved": True, "override_arguments": changed}
    if decision is None:
        return ChatResponse(content="I cannot tell what the owner wants.", usage=_usage(request))
    call = ToolCall(id="answer", name=ANSWER_TOOL, arguments=json.dumps(decision))
    return ChatResponse(tool_calls=(call,), usage=_usage(request), model=request.model)


def office_model(request: ChatRequest) -> ChatResponse:
    """One model turn of the office agent, or of a reply interpreter."""
    if request.caller.kind == "reply-interpreter":
        return read_reply(request)
    results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if results:
        said = "; ".join(_said(text) for text in results)
        answer = ToolCall(id="answer", name=ANSWER_TOOL, arguments=json.dumps({"text": said}))
        return ChatResponse(tool_calls=(answer,), usage=_usage(request), model=request.model)
    text = next(m.content for m in request.messages if m.role is MessageRole.USER)
    offered = {tool.name for tool in request.tools}
    calls: list[ToolCall] = []
    schemas = {tool.name: tool.parameters for tool in request.tools}
    for lease in _LEASE.findall(text) if "return-deposit-tool" in offered else []:
        arguments: dict[str, object] = {"lease_id": lease}
        if "iban" in schemas["return-deposit-tool"].get("properties", {}):
            # The model reads an IBAN as the token a PII rule gave it, and writes it back.
            arguments["iban"] = next(iter(_TOKEN.findall(text)), "")
        calls.append(
            ToolCall(
                id=f"call-{len(calls)}",
                name="return-deposit-tool",
                arguments=json.dumps(arguments),
            )
        )
    for purpose, amount in _EXPENSE.findall(text) if "book-expense-tool" in offered else []:
        calls.append(
            ToolCall(
                id=f"call-{len(calls)}",
                name="book-expense-tool",
                arguments=json.dumps(
                    {"purpose": purpose.lower(), "amount": float((amount or "0").replace(",", "."))}
                ),
            )
        )
    if not calls:
        return ChatResponse(content="There is nothing for the desk to do.", usage=_usage(request))
    return ChatResponse(tool_calls=tuple(calls), usage=_usage(request), model=request.model)


def scripted_provider() -> FunctionProvider:
    """The scripted office model, serving every model name."""
    return FunctionProvider(office_model)
