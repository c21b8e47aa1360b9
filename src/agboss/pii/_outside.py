"""What leaves the process, masked: pending asks, events, records, channels' asks.

A tool's arguments are masked by its input DTO's marked fields (always, rule or not) and by
the detectors of the rules in force; free texts (a reply, a tool error) by the detectors and the
values the same entry's arguments hold. What the engine stores for its own replay keeps the
real values.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.pii._policy import PiiPolicy, _marks, marked_values
from agboss.records import (
    DecisionEntry,
    PauseAnswerRecord,
    PauseVote,
    PauseVotes,
    PendingPause,
    StepRecord,
)

__all__ = ["PiiOutside"]

_NONE = PiiPolicy({})


class PiiOutside:
    """Masks what one application shows outside."""

    def __init__(
        self,
        tool_inputs: dict[str, dict[str, type[BaseModel]]],
        policies: dict[str, PiiPolicy],
        workflow_inputs: dict[str, type[BaseModel]] | None = None,
    ) -> None:
        """Args:
        tool_inputs: Each agent's tools by name, each with its input DTO.
        policies: Each workflow's PII policy.
        workflow_inputs: Each workflow's input DTO (its start's), by name.
        """
        self.tool_inputs = tool_inputs
        self.policies = policies
        self.workflow_inputs = workflow_inputs or {}
        self.masks = any(policy.active for policy in policies.values()) or any(
            _marks(dto) for tools in tool_inputs.values() for dto in tools.values()
        )
        """Whether anything is ever masked (else outputs skip the walk)."""

    def _input(self, agent: str | None, tool: str | None) -> type[BaseModel] | None:
        if agent is None or tool is None:
            return None
        return self.tool_inputs.get(agent, {}).get(tool)

    def _needed(self, policy: PiiPolicy, dto: type[BaseModel] | None) -> bool:
        return policy.active or (dto is not None and bool(_marks(dto)))

    def input_values(self, workflow: str, input_json: str | None) -> list[tuple[str, str]]:
        """The marked values of an execution's input (its workflow's start DTO): what a free
        text (a reason, a reply, a tool error) may quote and must not show — a kind of one's
        own (``detect=False``) is masked only where its value is known."""
        dto = self.workflow_inputs.get(workflow)
        if input_json is None or dto is None or not _marks(dto):
            return []
        try:
            return marked_values(json.loads(input_json), dto)
        except ValueError:
            return []

    def call_values(self, step: StepRecord) -> list[tuple[str, str]]:
        """The marked values of a step's tool call's arguments."""
        call = step.tool_call
        if call is None or call.arguments is None:
            return []
        return marked_values(call.arguments, self._input(step.agent.name, call.tool))

    def policy(self, workflow: str) -> PiiPolicy:
        """The policy of a workflow's executions."""
        return self.policies.get(workflow) or _NONE

    def arguments(self, data: Any, dto: type[BaseModel] | None, policy: PiiPolicy) -> Any:
        """A tool's arguments (a JSON-like value) as they may be shown."""
        if not self._needed(policy, dto):
            return data
        return policy.outside_value(data, dto)

    def unmasked(
        self,
        overrides: Mapping[str, Any],
        real: Mapping[str, Any],
        dto: type[BaseModel] | None,
        policy: PiiPolicy,
    ) -> Mapping[str, Any]:
        """Override arguments with each one handed back as it was shown (masked) turned back
        into the real value: an approver who changes one field and sends the others as
        ``pending`` showed them sends no mask to the tool. The same mapping if none was."""
        if not self._needed(policy, dto):
            return overrides
        shown = policy.outside_value(dict(real), dto)
        kept = {
            key: real[key] if key in real and value == shown.get(key) != real[key] else value
            for key, value in overrides.items()
        }
        return overrides if kept == dict(overrides) else kept

    def dto(self, value: BaseModel, policy: PiiPolicy) -> BaseModel:
        """A tool's arguments DTO as a channel may be sent it."""
        dto = type(value)
        if not self._needed(policy, dto):
            return value
        shown = policy.outside_value(value.model_dump(mode="json", by_alias=True), dto)
        try:
            return dto.model_validate(shown)
        except ValidationError:  # a mask breaks a field's constraint: shown as it is
            return dto.model_construct(**shown)

    def pending(self, pause: PendingPause, policy: PiiPolicy) -> PendingPause:
        dto = self._input(pause.agent, pause.ask.tool)
        if not self._needed(policy, dto):
            return pause
        ask = pause.ask.model_copy(
            update={"arguments": policy.outside_value(pause.ask.arguments, dto)}
        )
        votes = pause.votes
        if votes is not None:
            votes = self.votes(votes, pause.agent, pause.ask.tool, pause.ask.arguments, policy)
        return dataclasses.replace(pause, ask=ask, votes=votes)

    def votes(
        self,
        votes: PauseVotes,
        agent: str,
        tool: str | None,
        arguments: Mapping[str, Any] | None,
        policy: PiiPolicy,
        known: Sequence[tuple[str, str]] = (),
    ) -> PauseVotes:
        """A question's votes as they may be shown: each vote's reason and words masked like
        a decision's (``known``: the marked values its tree holds besides the call's)."""
        shown = self._votes(votes.votes, agent, tool, arguments, policy, known)
        return votes if shown is votes.votes else votes.model_copy(update={"votes": shown})

    def _votes(
        self,
        votes: tuple[PauseVote, ...],
        agent: str,
        tool: str | None,
        arguments: Mapping[str, Any] | None,
        policy: PiiPolicy,
        known: Sequence[tuple[str, str]] = (),
    ) -> tuple[PauseVote, ...]:
        dto = self._input(agent, tool)
        if not votes or not self._needed(policy, dto):
            return votes
        values = [*known, *([] if not arguments else marked_values(dict(arguments), dto))]
        return tuple(
            vote.model_copy(
                update={
                    "reason": None if vote.reason is None else policy.outside(vote.reason, values),
                    "reply": None if vote.reply is None else policy.outside(vote.reply, values),
                }
            )
            for vote in votes
        )

    def step(
        self, record: StepRecord, policy: PiiPolicy, known: Sequence[tuple[str, str]] = ()
    ) -> StepRecord:
        """A journaled step as it may be shown: its call's arguments masked, and its tool
        error by them, by ``known`` (the marked values its tree holds) and by detection."""
        call = record.tool_call
        dto = self._input(record.agent.name, None if call is None else call.tool)
        if not self._needed(policy, dto):
            return record
        values = [*known, *([] if call is None else marked_values(call.arguments, dto))]
        update: dict[str, Any] = {}
        if call is not None:
            update["tool_call"] = call.model_copy(
                update={"arguments": policy.outside_value(call.arguments, dto)}
            )
        if record.error is not None:
            update["error"] = policy.outside(record.error, values)
        return record.model_copy(update=update)

    def decision(
        self,
        decision: ToolCallApprovalDecisionDto,
        agent: str,
        tool: str | None,
        arguments: Mapping[str, Any] | None,
        policy: PiiPolicy,
        known: Sequence[tuple[str, str]] = (),
    ) -> ToolCallApprovalDecisionDto:
        """A decision on a call of ``agent``'s ``tool`` (asked with ``arguments``) as it may be
        shown: its reason and other arguments masked (``known``: the marked values its tree
        holds besides the call's, which its reason may quote)."""
        dto = self._input(agent, tool)
        if not self._needed(policy, dto):
            return decision
        values = [*known, *([] if not arguments else marked_values(dict(arguments), dto))]
        reason = decision.reason
        return decision.model_copy(
            update={
                "reason": None if reason is None else policy.outside(reason, values),
                "override_arguments": None
                if decision.override_arguments is None
                else policy.outside_value(decision.override_arguments, dto),
            }
        )

    def logged(
        self, entry: DecisionEntry, policy: PiiPolicy, known: Sequence[tuple[str, str]] = ()
    ) -> DecisionEntry:
        """A decision log's entry as it may be shown: its arguments, decision and words
        masked — by the call's marked values, ``known`` (the others its tree holds) and
        detection."""
        dto = self._input(entry.agent, entry.tool)
        if not self._needed(policy, dto):
            return entry
        values = [*known, *marked_values(entry.arguments, dto)]
        update: dict[str, Any] = {"arguments": policy.outside_value(entry.arguments, dto)}
        if entry.decision is not None:
            update["decision"] = self.decision(
                entry.decision, entry.agent, entry.tool, entry.arguments, policy, known
            )
        if entry.reply is not None:
            update["reply"] = policy.outside(entry.reply, values)
        return entry.model_copy(update=update)

    def answer(
        self, entry: PauseAnswerRecord, policy: PiiPolicy, known: Sequence[tuple[str, str]] = ()
    ) -> PauseAnswerRecord:
        """An audit entry as it may be shown: its step, decision, words and votes masked —
        by the call's marked values, ``known`` (the others its tree holds) and detection."""
        call = entry.step.tool_call
        dto = self._input(entry.step.agent.name, None if call is None else call.tool)
        if not self._needed(policy, dto):
            return entry
        values = [*known, *([] if call is None else marked_values(call.arguments, dto))]
        update: dict[str, Any] = {"step": self.step(entry.step, policy, known)}
        if entry.decision is not None:
            update["decision"] = self.decision(
                entry.decision,
                entry.step.agent.name,
                None if call is None else call.tool,
                None if call is None else call.arguments,
                policy,
                known,
            )
        if entry.reply is not None:
            update["reply"] = policy.outside(entry.reply, values)
        if entry.votes:
            tool, arguments = (None, None) if call is None else (call.tool, call.arguments)
            agent = entry.step.agent.name
            update["votes"] = self._votes(entry.votes, agent, tool, arguments, policy, known)
        return entry.model_copy(update=update)
