"""A tool's call that may have run: begun (its intent journaled), never ended (no result).

Its tool's `OnInterrupted` says what happens, once, on the instance that recovers the tree:
``RERUN`` runs it again with the same idempotency key; ``FAIL`` fails the agent's step with
`ToolInterruptedError`; ``ASK`` pauses on a question to the tool's channel — a pause of its own
(``<step>/interrupted-<attempt>``, its step record of kind `TOOL_INTERRUPTED`, its ask of kind
`PauseKind.INTERRUPTED`) with the call's arguments as they were approved. Approved, the call
runs again as it was (its next attempt's intent committed with the pauses it takes, before it
runs); rejected, the model reads that it may have run and was not run again, by whom and why.
A run again that is cut off too asks again, under the next attempt's key.
"""

from __future__ import annotations

import logging

from agboss.engine.questions import TOOL_INTERRUPTED, ask_approval
from agboss.engine.steps._steps import RUN_AGAIN, RunAgain
from agboss.engine.steps._tool_results import CallSite, ToolResult, ToolStep, journal_refusal
from agboss.engine.trees import Waiting, interrupted_key
from agboss.enums import OnInterrupted
from agboss.errors import ToolInterruptedError
from agboss.observability import log_event
from agboss.records import PauseRecord
from agboss.store.writes import TakePause

__all__ = ["on_interrupted"]


async def on_interrupted(
    site: CallSite, call: ToolStep, attempt: int
) -> RunAgain | ToolResult | Waiting:
    """What the tool says happens to a call whose ``attempt`` may have run.

    Returns:
        `RunAgain` (the pauses it took buffered for the intent's commit), the result the
        model reads (a refusal to run it again, journaled), or what waits while a person is
        asked.

    Raises:
        ToolInterruptedError: The tool says ``FAIL``.
    """
    spec = call.spec
    log_event(
        site.frame.runtime.logger,
        logging.WARNING,
        "tool.interrupted",
        "%(tool)s's call in execution %(execution_id)s may have run (attempt %(attempt)s "
        "left no result): %(then)s",
        tool=spec.name,
        execution_id=site.frame.row.execution_id,
        attempt=attempt,
        then=spec.on_interrupted.value,
    )
    if spec.on_interrupted is OnInterrupted.FAIL:
        said = site.frame.state.resolved.get(
            (site.frame.row.execution_id, interrupted_key(call.key, attempt))
        )
        if said is not None:  # a person checked, and said how it went (App.retry)
            return await _said(site, call, said)
        raise ToolInterruptedError(
            f"{spec.name}'s call may have run: its attempt {attempt} began and left no "
            "result (its process died, or its pass lost the tree, mid-call)",
            agent=site.agent,
            node_id=site.node_id,
            hint="check whether it took effect, then say so: app.retry(execution_id, "
            "retried_by=…, call_ran=True, call_result='what it did') or call_ran=False to run it "
            "once more with the same idempotency key (agboss retry --call-ran / --call-not-run)",
            tool=spec.name,
            attempt=attempt,
        )
    if spec.on_interrupted is OnInterrupted.RERUN:  # (an intent from when it said otherwise)
        site.frame.writes.add(*call.taken)  # with the next attempt's intent, if any
        return RUN_AGAIN
    return await _ask(site, call, attempt)


async def _said(site: CallSite, call: ToolStep, said: PauseRecord) -> RunAgain | ToolResult:
    """What a person said of a call cut off under ``FAIL`` (`App.retry`'s ``call_ran``), as an
    answer to the question ``ASK`` would have asked: it did not run (it runs once more, with
    the same key), or it ran (the model reads that, and what they said it did)."""
    frame = site.frame
    taken = (TakePause(said.tenant_id, said.pause_id),)
    decision = said.answer.decision if said.answer is not None else None
    who = (said.answer.responder if said.answer is not None else None) or "an operator"
    if decision is None or decision.approved:
        frame.writes.add(*call.taken, *taken)  # with the next attempt's intent
        return RUN_AGAIN
    return await journal_refusal(
        frame,
        call.key,
        call.record,
        f"{call.spec.name}'s call was cut off mid-call; {who} checked that it ran, and "
        f"says: {decision.reason}. It was not run again.",
        (*call.taken, *taken),
        as_error=False,
    )


async def _ask(site: CallSite, call: ToolStep, attempt: int) -> RunAgain | ToolResult | Waiting:
    frame = site.frame
    # What the call's row would have taken is taken now: the tree rests on the question, and
    # an answer left Resolved would keep the sweep moving it.
    frame.writes.add(*call.taken)
    approval = await ask_approval(
        frame,
        agent=site.agent,
        channel=frame.runtime.assembly.tool_channels[call.tool_cls],
        tool=call.spec,
        step_key=interrupted_key(call.key, attempt),
        step=call.record.model_copy(update={"kind": TOOL_INTERRUPTED}),
        context=call.step,
        args=call.args,
        path=site.path,
    )
    if isinstance(approval, Waiting):
        return approval
    taken = approval.taken
    decision = approval.decision
    if decision.approved:
        frame.writes.add(*taken)  # with the next attempt's intent, before the call runs again
        return RUN_AGAIN
    reason = f": {decision.reason}" if decision.reason else ""
    return await journal_refusal(
        frame,
        call.key,
        call.record,
        f"{call.spec.name}'s call may have run (its process stopped mid-call) and was not run "
        f"again: {approval.decided_by} declined{reason}",
        taken,
    )
