"""OpenTelemetry's GenAI semantic conventions for what agboss does: an agent invoked
(``invoke_agent``), its model called (``chat``), a tool executed (``execute_tool``) — spans
named and attributed as the conventions of `opentelemetry-semantic-conventions` say, with
agboss's own ``agboss.*`` attributes beside them — and the duration of each tool's run
(``gen_ai.client.operation.duration`` of ``execute_tool``).

No span or metric carries a conversation's content (the conventions' opt-in message
attributes are not set): arguments and answers may hold what the PII rules keep in.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from opentelemetry import metrics
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.trace import Span

from agboss.observability._tracing import Attribute, conventional_span

__all__ = ["agent_span", "chat_span", "tool_span", "usage_seen"]

_OPERATION = gen_ai.GenAiOperationNameValues

_TOOL_DURATION = gen_ai_metrics.create_gen_ai_client_operation_duration(metrics.get_meter("agboss"))


def agent_span(
    name: str, description: str, conversation_id: str, **attributes: Attribute
) -> AbstractContextManager[Span]:
    """``invoke_agent <name>``: an agent's run in a pass (its turns until it answers or
    waits); the conversation is the thread."""
    operation = _OPERATION.INVOKE_AGENT.value
    return conventional_span(
        f"{operation} {name}",
        {
            gen_ai.GEN_AI_OPERATION_NAME: operation,
            gen_ai.GEN_AI_AGENT_NAME: name,
            gen_ai.GEN_AI_AGENT_DESCRIPTION: description,
            gen_ai.GEN_AI_CONVERSATION_ID: conversation_id,
        },
        **attributes,
    )


def chat_span(model: str, **attributes: Attribute) -> AbstractContextManager[Span]:
    """``chat <model>``: one attempt of a model call."""
    operation = _OPERATION.CHAT.value
    return conventional_span(
        f"{operation} {model}",
        {gen_ai.GEN_AI_OPERATION_NAME: operation, gen_ai.GEN_AI_REQUEST_MODEL: model},
        model=model,
        **attributes,
    )


def usage_seen(span: Span, input_tokens: int, output_tokens: int) -> None:
    """A model call's tokens on its span, as the conventions and agboss name them."""
    span.set_attribute(gen_ai.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
    span.set_attribute(gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)
    span.set_attribute("agboss.input_tokens", input_tokens)
    span.set_attribute("agboss.output_tokens", output_tokens)


@contextmanager
def tool_span(
    name: str, call_id: str | None, description: str, **attributes: Attribute
) -> Iterator[Span]:
    """``execute_tool <name>``: one run of a tool's handler, and its duration recorded
    (``gen_ai.client.operation.duration``; ``error.type`` when it raised)."""
    operation = _OPERATION.EXECUTE_TOOL.value
    started = time.perf_counter()
    error: str | None = None
    try:
        with conventional_span(
            f"{operation} {name}",
            {
                gen_ai.GEN_AI_OPERATION_NAME: operation,
                gen_ai.GEN_AI_TOOL_NAME: name,
                gen_ai.GEN_AI_TOOL_CALL_ID: call_id,
                gen_ai.GEN_AI_TOOL_DESCRIPTION: description,
                gen_ai.GEN_AI_TOOL_TYPE: "function",
            },
            tool=name,
            **attributes,
        ) as current:
            yield current
    except BaseException as raised:
        error = type(raised).__qualname__
        raise
    finally:
        measured = {gen_ai.GEN_AI_OPERATION_NAME: operation, gen_ai.GEN_AI_TOOL_NAME: name}
        if error is not None:
            measured[error_attributes.ERROR_TYPE] = error
        _TOOL_DURATION.record(time.perf_counter() - started, measured)
