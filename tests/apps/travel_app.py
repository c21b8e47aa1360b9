"""A travel desk whose tool input has one field of each kind an approvals form edits: text,
optional text, a whole number, a yes / no, a choice and a list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    PauseAnswerer,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    provide,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from tests.apps.recorded import Recorder, Records


class TripDto(BaseModel):
    city: str
    note: str | None = None
    nights: int
    refundable: bool
    cabin: Literal["economy", "business"]
    travellers: list[str]


class BookedDto(BaseModel):
    status: str


@dataclass
class TravelRecorder(Recorder):
    """What the travel application's tool was given in one test (`tests.apps.recorded`)."""

    booked: list[TripDto] = field(default_factory=list)


@channel_role(
    name="trip-approval-channel",
    description="The traveller's manager approves a trip",
    approves=TripDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class TripApprovalChannel(ChannelOf[TripDto]): ...


@channel(name="screen-trip-approval-channel", description="Shows the trip on a screen")
class ScreenTripApprovalChannel(TripApprovalChannel):
    async def send(self, ask: ChannelAsk[TripDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="book-trip-tool",
    description="Books a trip",
    input=TripDto,
    output=BookedDto,
    channel=TripApprovalChannel,
    deps=[TravelRecorder],
)
class BookTripTool(Records[TravelRecorder], ToolHandler[TripDto, BookedDto]):
    async def run(self, args: TripDto) -> BookedDto:
        self.recorded.booked.append(args)
        return BookedDto(status=f"booked {args.city}")


@agent(
    name="travel-agent",
    description="Books trips",
    prompt="Book what is asked.",
    model="moonshotai/kimi-k2.6",
    tools=[BookTripTool],
)
class TravelAgent: ...


@workflow_start(name="travel-workflow-start", description="A request", input=WorkflowStartTextDto)
class TravelStart: ...


@workflow_finish(
    name="travel-workflow-finish", description="The answer", output=WorkflowFinishTextDto
)
class TravelFinish: ...


@workflow(
    name="travel-workflow",
    version="1.0.0",
    flow=[
        start(TravelStart)
        .returns(WorkflowStartTextDto)
        .to_agent(TravelAgent)
        .to_finish(TravelFinish)
    ],
)
class TravelWorkflow: ...


@application(
    name="travel-application",
    workflows=[TravelWorkflow],
    channels=[ScreenTripApprovalChannel],
    dependencies=[provide(TravelRecorder)],
)
class TravelApplication: ...
