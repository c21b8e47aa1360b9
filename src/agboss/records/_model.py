"""The execution record: what ran (its steps), what it cost, and who answered its pauses."""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agboss.enums import ExecutionStatus
from agboss.models import Usage
from agboss.records._deploys import ContinuationRecord

__all__ = [
    "ChildExecutionRecord",
    "ComponentRecord",
    "ExecutionRecord",
    "FailureRecord",
    "LedgerRecord",
    "RetryRecord",
    "Spend",
    "StepRecord",
    "ToolCallRecord",
]


class ComponentRecord(BaseModel):
    """A component as the record names it."""

    model_config = ConfigDict(frozen=True)

    kind: str
    name: str


class ToolCallRecord(BaseModel):
    """The tool call a step belongs to."""

    model_config = ConfigDict(frozen=True)

    tool: str
    call_id: str
    arguments: dict[str, Any] | None = None


with warnings.catch_warnings():
    # The spec names the field "copy"; it shadows BaseModel.copy, Pydantic's deprecated
    # alias of model_copy, which agboss never calls.
    warnings.filterwarnings("ignore", message='Field name "copy"', category=UserWarning)

    class _StepRecordFields(BaseModel):
        copy: int = 0  # type: ignore[assignment]


class StepRecord(_StepRecordFields):
    """One journaled step of an execution.

    Attributes:
        kind: ``model-call``, ``tool-run``, ….
        key: The step's idempotency key.
        agent: The agent the step belongs to.
        node_id: The flow node.
        visit: How many times the node ran before in this execution.
        copy: The branch of a parallel launch the step ran in (0 outside one); also readable
            as ``copy_index``.
        item_index: The item of the nearest per-item launch the step runs in (through child
            workflows), ``None`` outside one.
        tool_call: The tool call, for a tool's steps.
        tool_loop_iteration: The agent's model turn.
        validation_attempts: Invalid answers the agent gave before this step.
        usage: What a model call cost.
        error: A tool error the model read, if the step ended in one.
        history: The thread's earlier exchanges an agent's first model call was sent before
            the request (`History`); its later calls are sent the same.
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    key: str
    agent: ComponentRecord
    node_id: str
    visit: int = 0
    item_index: int | None = None
    tool_call: ToolCallRecord | None = None
    tool_loop_iteration: int = 0
    validation_attempts: int = 0
    usage: Usage | None = None
    error: str | None = None
    history: int = 0

    @property
    def copy_index(self) -> int:
        """The branch of a parallel launch the step ran in (``copy``)."""
        return self.copy


class Spend(BaseModel):
    """What an execution spent on models.

    Attributes:
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost: Cost, in the providers' currency.
        model_calls: How many model calls.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    model_calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    @classmethod
    def of(cls, usage: Usage) -> Spend:
        """The spend of a usage total (a `Usage` is valid: its fields are taken as they are)."""
        return cls.model_construct(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost=usage.cost,
            model_calls=usage.calls,
        )


class LedgerRecord(BaseModel):
    """One model call counted against the tree's budgets.

    Attributes:
        caller: The cost caller: ``agent:<name>`` or ``reply-interpreter:<name>``.
        execution_id: The execution it was made in (for an interpreter, the pause's).
        usage: What it spent.
        at: When it was counted (ISO 8601, the application's Clock).
    """

    model_config = ConfigDict(frozen=True)

    caller: str
    execution_id: str
    usage: Usage
    at: str


class FailureRecord(BaseModel):
    """A failure as records and listings show it: its code, its sentence, what to do.

    Attributes:
        code: The failure's stable code (``agent.failed``, ``model.provider-error``, …).
        message: What happened, masked by the workflow's PII rules.
        hint: What to do, if the failure said (masked too).
        error_type: The failure's class, as its qualified name.
    """

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    hint: str | None = None
    error_type: str


class RetryRecord(BaseModel):
    """One `App.retry` of the tree: when, by whom, and the failure it replaced.

    Attributes:
        generation: Which retry it was (1 for the first): the questions it asked again
            carry it as their ``generation``.
        retried_at: When (ISO 8601, the application's Clock).
        retried_by: Who asked for it, as they said (``None``: not said).
        failure: The failure it replaced, which stays in the history.
    """

    model_config = ConfigDict(frozen=True)

    generation: int
    retried_at: str
    retried_by: str | None = None
    failure: FailureRecord | None = None


class ExecutionRecord(BaseModel):
    """What an execution did, returned with ``record=True``.

    Attributes:
        execution_id: The execution.
        workflow: Its workflow's name.
        workflow_version: Its workflow's version.
        workflow_fingerprint: What its journal depends on, as the build it began under
            defined it (its flow, agents, tools and their schemas, roles), digested: two
            executions of one version with different fingerprints ran under different
            definitions. ``None`` for one begun before agboss recorded it.
        steps: Every journaled step, in the order they ran.
        pauses: The audit trail: every resolved pause of the tree, in the order asked.
        spend: What it spent.
        ledger: Every model call counted against the tree's budgets, with its caller —
            including reply interpreters' calls whose answer no step took yet.
        children: The child executions' records (workflow as a step).
        retries: The tree's retries (`App.retry`), oldest first, each with the failure it
            replaced (a root's record; a child's is empty).
        continuations: The tree's moves to a new build by its workflow's continuation
            (``@workflow(continuation=...)``), oldest first, each with the calls it mapped
            (a root's record; a child's is empty).
    """

    model_config = ConfigDict(frozen=True)

    execution_id: str
    workflow: str
    workflow_version: str
    workflow_fingerprint: str | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    pauses: list[Any] = Field(default_factory=list)
    spend: Spend = Spend()
    ledger: list[LedgerRecord] = Field(default_factory=list)
    children: list[ChildExecutionRecord] = Field(default_factory=list)
    retries: list[RetryRecord] = Field(default_factory=list)
    continuations: list[ContinuationRecord] = Field(default_factory=list)


class ChildExecutionRecord(ExecutionRecord):
    """A child execution's record (a workflow run as a step): in ``record.children``, and as
    the ``record`` of its entry in ``result.children``.

    Its ``steps`` and ``pauses`` are its own (a grandchild's are in the grandchild's record);
    its ``spend`` is its own steps'. Beyond an `ExecutionRecord`:

    Attributes:
        status: Where it stands.
        item_index: The item of the nearest per-item launch above it (the one that started
            it, or its parent's), if any.
    """

    status: ExecutionStatus
    item_index: int | None = None


ExecutionRecord.model_rebuild()
