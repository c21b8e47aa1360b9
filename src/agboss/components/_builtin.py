"""The built-in channels: decide at once (`AutoApproveChannel`, `AutoRejectChannel`), or ask
in the terminal (`TerminalUserChannel`). Name them on a tool as they are; no role is needed."""

from __future__ import annotations

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

__all__ = ["AutoApproveChannel", "AutoRejectChannel", "TerminalUserChannel"]


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
