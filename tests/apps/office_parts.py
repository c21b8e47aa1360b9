"""What the office applications of the tests share: the DTOs of the desk's tools, the start
and finish of its workflow, and its one-agent flow. Each application (`tests.apps.office`
without channels, `tests.apps.desk` with channel roles, `tests.apps.replies_app` with reply
interpreters) adds its own tools, channels and agent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agboss import (
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    start,
    workflow_finish,
    workflow_start,
)
from agboss.flow import Flow


class DepositReturnDto(BaseModel):
    lease_id: str


class ExpenseDto(BaseModel):
    purpose: str
    amount: float


class DeskDoneDto(BaseModel):
    status: str


@workflow_start(name="office-workflow-start", description="A request", input=WorkflowStartTextDto)
class OfficeWorkflowStart: ...


@workflow_finish(
    name="office-workflow-finish", description="The answer", output=WorkflowFinishTextDto
)
class OfficeWorkflowFinish: ...


def office_flow(agent: type[Any]) -> list[Flow]:
    """The office workflow's flow: the request, to ``agent``, to the answer."""
    return [
        start(OfficeWorkflowStart)
        .returns(WorkflowStartTextDto)
        .to_agent(agent)
        .to_finish(OfficeWorkflowFinish),
    ]
