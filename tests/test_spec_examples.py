"""The examples of pauses.md and python-api.md, run as written (in Python)."""

from __future__ import annotations

from agboss import (
    ExecutionStatus,
    PauseAnswerer,
    ToolCallApprovalDecisionDto,
    WorkflowFinishTextDto,
)
from agboss.testing import call_tools, reply_with, test_with, tool_call
from tests.apps.desk import (
    BookExpenseTool,
    DeskDepositApprovalChannel,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    ReturnDepositTool,
)


async def test_the_office_example_of_python_api_runs_as_written() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(
                tool_call(ReturnDepositTool, lease_id="L-7"),
                tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
            ),
        ).then_return(reply_with(WorkflowFinishTextDto, text="Both done."))
        desk_channel = env.mock_of(DeskDepositApprovalChannel)
        result = await env.app.execute(
            OfficeWorkflow,
            {"text": "Return L-7's deposit and book the taxi"},
            tenant_id="acme",
            owner_id="user-1",
        )
        assert result.status is ExecutionStatus.PAUSED
        owner_pause = result.pending[0]  # the ThreadOwner pause; the Channel one has no id here
        assert owner_pause.answered_by is PauseAnswerer.THREAD_OWNER
        assert result.pending[1].pause_id is None
        pause_id_the_desk_channel_was_sent = desk_channel.send.call_args.args[0].pause_id
        assert owner_pause.pause_id is not None
        result = await env.app.resume(
            owner_pause.pause_id, reply='{"approved": true}', tenant_id="acme", owner_id="user-1"
        )
        result = await env.app.resume(
            pause_id_the_desk_channel_was_sent,
            decision=ToolCallApprovalDecisionDto(approved=True),
            tenant_id="acme",
            answered_by="clerk-3",
            record=True,
        )
        assert result.status is ExecutionStatus.COMPLETED
        assert result.pending == []
        assert result.record is not None
        assert [(p.role, p.responder) for p in result.record.pauses] == [
            ("deposit-approval-channel", "clerk-3"),
            ("expense-approval-channel", "user-1"),
        ]
        assert result.record.pauses[1].reply == '{"approved": true}'
