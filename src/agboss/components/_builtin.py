"""The built-in channels: decide at once (`AutoApproveChannel`, `AutoRejectChannel`), ask in
the terminal (`TerminalUserChannel`), or show a developer each question's id
(`DevelopmentChannel`). Name them on a tool as they are (no role is needed), or choose one for a
role (`App.create(channels=...)`)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from pydantic import BaseModel

from agboss.components._channels import (
    ChannelAsk,
    ChannelHandler,
    ChannelOutcome,
    ChannelWithdrawal,
)
from agboss.components._decorators import channel
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.enums import PauseAnswerer

__all__ = ["AutoApproveChannel", "AutoRejectChannel", "DevelopmentChannel", "TerminalUserChannel"]


@channel(name="auto-approve-channel", description="Approves every call at once")
class AutoApproveChannel(ChannelHandler[BaseModel]):
    """Approves every call at once: the call never pauses."""

    def send(self, ask: ChannelAsk[BaseModel]) -> ChannelOutcome:
        return ChannelOutcome.decided(ToolCallApprovalDecisionDto(approved=True))


@channel(name="auto-reject-channel", description="Rejects every call at once")
class AutoRejectChannel(ChannelHandler[BaseModel]):
    """Rejects every call at once: the model reads the rejection."""

    def send(self, ask: ChannelAsk[BaseModel]) -> ChannelOutcome:
        return ChannelOutcome.decided(
            ToolCallApprovalDecisionDto(approved=False, reason="calls of this tool are not allowed")
        )


@channel(name="terminal-user-channel", description="Asks the thread's owner in the terminal")
class TerminalUserChannel(ChannelHandler[BaseModel]):
    """Shows the question in the terminal and waits; the thread's owner answers it by its id.

    The program that runs the execution reads the answer (a prompt, piped input) and calls
    `App.resume` with the ``pause_id`` that ``result.pending`` lists.
    """

    output: TextIO | None = None
    """Where questions are written; standard output when ``None``."""

    def _out(self) -> TextIO:
        return self.output or sys.stdout

    def send(self, ask: ChannelAsk[BaseModel]) -> ChannelOutcome:
        arguments: dict[str, Any] = ask.value.arguments.model_dump(mode="json")
        shown = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        print(f"? {ask.agent} asks to run {ask.value.tool}({shown})", file=self._out(), flush=True)
        return ChannelOutcome.await_reply()

    def withdraw(self, withdrawal: ChannelWithdrawal[BaseModel]) -> None:
        print(
            f"- the question about {withdrawal.value.tool} was {withdrawal.resolution.value}",
            file=self._out(),
            flush=True,
        )


@channel(
    name="development-channel",
    description="Shows each question's id to the developer, who answers it from a terminal",
)
class DevelopmentChannel(ChannelHandler[BaseModel]):
    """For development only: shows each question on standard error *with its pause id* —
    which a production channel keeps to itself — and the command and the request that answer
    it, so that answering from the command line or curl needs no channel of your own.

    Choose it for any role while you build (``App.create(channels={Role:
    DevelopmentChannel})``), or name it on a tool. `App.create` refuses it where the instance
    runs in production (``environment="production"``, or ``AGBOSS_ENVIRONMENT=production``):
    there, a question's id is the right to answer it, and stays with its channel.
    """

    output: TextIO | None = None
    """Where questions are written; standard error when ``None``."""

    def _out(self) -> TextIO:
        return self.output or sys.stderr

    def send(self, ask: ChannelAsk[BaseModel]) -> ChannelOutcome:
        arguments = json.dumps(ask.value.arguments.model_dump(mode="json"))
        who = (
            "--owner <the thread's owner>"
            if ask.answered_by is PauseAnswerer.THREAD_OWNER
            else "--answered-by <you>"
        )
        body = json.dumps({"pause_id": ask.pause_id, "decision": {"approved": True}})
        print(
            f"agboss development channel: {ask.agent} asks {ask.channel} to approve "
            f"{ask.value.tool} {arguments}\n"
            f"  pause id: {ask.pause_id}\n"
            f"  answer:   agboss resume {ask.pause_id} --app <module:Application> {who} "
            "--approve\n"
            f"  or:       curl -X POST <router>/answers -H 'Content-Type: application/json' "
            f"-d '{body}'",
            file=self._out(),
            flush=True,
        )
        return ChannelOutcome.await_reply()

    def withdraw(self, withdrawal: ChannelWithdrawal[BaseModel]) -> None:
        print(
            f"agboss development channel: the question {withdrawal.pause_id} about "
            f"{withdrawal.value.tool} was {withdrawal.resolution.value}",
            file=self._out(),
            flush=True,
        )
