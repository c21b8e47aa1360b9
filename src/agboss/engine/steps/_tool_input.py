"""A tool that asks the person a question mid-call (MCP elicitation), answered through pauses.

An MCP tool's call may come back with questions instead of a result (an `McpRound`). The
round is journaled (``<step>/input-<n>``: the questions and the server's state), each question
is a pause of the tool's channel (its ask an `McpInputRequest`, its step record of kind
`TOOL_INPUT`), and once every question of the round is answered the tool is called again with
the answers — an approval is ``accept`` with ``override_arguments`` as the answer, a rejection
``decline``. The pauses of a round are taken by the commit that journals what came next. A
call that comes back with questions runs nothing on the server's side, so a pass that is cut
off before it journaled a round asks the server again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from agboss.assembly import McpTool
from agboss.components import ToolSpec
from agboss.engine.questions import TOOL_INPUT, Approval, ask_approval, question_spec
from agboss.engine.steps._steps import TOOL_ROUND, Step, run_once
from agboss.engine.steps._tool_results import CallSite, ToolResult, ToolStep, journal_refusal
from agboss.engine.trees import Waiting
from agboss.mcp import McpInputRequest
from agboss.mcp.client import McpReply, McpRound

__all__ = ["MAX_ROUNDS", "Answering", "Asked", "JournalTool", "run_asking"]

Answering = tuple[dict[str, McpReply] | None, str | None]
"""An MCP tool's call again: the answers to the questions it asked, and the state it gave."""

JournalTool = Callable[[ToolStep, Answering, int], Awaitable[ToolResult | Waiting]]
"""Runs a tool's call as its journaled step: with the answers it is called again with, and how
many of its earlier attempts ended in a round of questions (the agent's `journal_tool`)."""

MAX_ROUNDS = 10
"""Rounds of questions one call may ask before the model reads a tool error."""


class Asked(Exception):
    """Carries a round of questions out of the tool's step, which journals only a result."""

    def __init__(self, asked: McpRound) -> None:
        super().__init__("the tool asked a question")
        self.asked = asked


async def run_asking(
    site: CallSite, call: ToolStep, journal_tool: JournalTool
) -> ToolResult | Waiting:
    """Runs an MCP tool's call to its result, asking its questions as pauses.

    Args:
        site: Where the call is made.
        call: The call.
        journal_tool: Runs the call as its journaled step.

    Returns:
        The call's result, or what waits while a question waits for its answer.
    """
    frame = site.frame
    key, record, spec = call.key, call.record, call.spec
    answers: dict[str, McpReply] | None = None
    state: str | None = None
    for number in range(MAX_ROUNDS + 1):
        round_key = f"{key}/input-{number}"
        entry = frame.journaled(round_key)
        if entry is not None:
            asked = McpRound.model_validate_json(entry.result_json)
        else:
            try:
                # Each journaled round ended one attempt: not in doubt.
                return await journal_tool(call, (answers, state), number)
            except Asked as signal:
                asked = signal.asked
            questioned = record.model_copy(update={"kind": TOOL_INPUT})
            await run_once(
                frame,
                Step(
                    round_key,
                    questioned,
                    _same(asked),
                    encode=lambda done: done.model_dump_json(),
                    decode=McpRound.model_validate_json,
                    implies=call.taken,
                ),
                TOOL_ROUND,  # what the call answered is durable before anyone is asked
            )
            call = replace(call, taken=())
        refusal = _refusal(site, call.tool_cls, spec, asked, number)
        if refusal is not None:
            return await journal_refusal(frame, key, record, refusal, call.taken)
        # One pause per question, keyed by its place in the journaled round.
        approvals = [
            await _ask(site, f"{round_key}/q-{index}", call, question)
            for index, question in enumerate(_questions(asked))
        ]
        waits = [approval for approval in approvals if isinstance(approval, Waiting)]
        if waits:
            return Waiting.joined(waits)
        done = [approval for approval in approvals if not isinstance(approval, Waiting)]
        answers = {
            question.key: _reply(approval)
            for question, approval in zip(asked.questions, done, strict=True)
        }
        state = asked.request_state
        call = replace(call, taken=tuple(t for approval in done for t in approval.taken))
    raise AssertionError("unreachable: the last round is refused")  # pragma: no cover


def _same(asked: McpRound) -> Callable[[int], Awaitable[McpRound]]:
    """A round's step: what the call answered, as it answered it."""

    async def same(_: int) -> McpRound:
        return asked

    return same


def _questions(asked: McpRound) -> list[McpInputRequest]:
    return [
        McpInputRequest(elicitation=q.message, requested_schema=q.requested_schema)
        for q in asked.questions
    ]


def _refusal(
    site: CallSite, tool_cls: type[McpTool], spec: ToolSpec, asked: McpRound, number: int
) -> str | None:
    """Why a round cannot be asked (the model reads it), if it cannot."""
    if asked.unsupported is not None:
        return f"{spec.name} asked for {asked.unsupported}, which agboss does not provide"
    if number == MAX_ROUNDS:
        return f"{spec.name} kept asking questions: more than {MAX_ROUNDS} rounds"
    if not asked.questions:
        return None  # only state: the next call carries it back at once
    if site.frame.runtime.assembly.tool_channels.get(tool_cls) is None:
        first = asked.questions[0].message
        return (
            f"{spec.name} asked {first!r}, but it names no channel to ask; its server's "
            "declaration must name one for it in approvals="
        )
    return None


async def _ask(
    site: CallSite, step_key: str, call: ToolStep, question: McpInputRequest
) -> Approval | Waiting:
    frame = site.frame
    channel = frame.runtime.assembly.tool_channels[call.tool_cls]
    return await ask_approval(
        frame,
        agent=site.agent,
        channel=channel,
        tool=question_spec(call.spec, question),
        step_key=step_key,
        step=call.record.model_copy(update={"kind": TOOL_INPUT}),
        context=call.step,
        args=question,
        path=site.path,
    )


def _reply(approval: Approval) -> McpReply:
    decision = approval.decision
    if not decision.approved:
        return McpReply(action="decline")
    return McpReply(action="accept", content=dict(decision.override_arguments or {}))
