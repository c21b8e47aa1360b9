"""Runs the office workflow once: ``python -m examples.flow_patterns.office ["request"]``.

With ``AGBOSS_MODEL_BASE_URL`` (and ``AGBOSS_MODEL_API_KEY``) set, the agent runs on that
OpenAI-compatible provider; ``AGBOSS_MODEL_NAME`` is the model name the server is asked for
(by default the agent's own, ``moonshotai/kimi-k2.6``). Otherwise a scripted model stands in.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agboss import App, WorkflowFinishTextDto, WorkflowStartTextDto
from agboss.models import ModelProvider
from agboss.models.openai import OpenAIProvider
from examples.flow_patterns.desk_model import scripted_provider
from examples.flow_patterns.office.components import OfficeApplication, OfficeWorkflow

DEFAULT_REQUEST = "Return L-7's deposit and book the taxi, 12.50 euros."


def provider() -> tuple[ModelProvider, str]:
    """The real provider when one is configured, else the scripted model."""
    real = OpenAIProvider.from_env()
    if real is None:
        return scripted_provider(), "a scripted model (set AGBOSS_MODEL_BASE_URL for a real one)"
    return real, os.environ["AGBOSS_MODEL_BASE_URL"]


async def main(request: str) -> None:
    """Runs one request through the office workflow and prints what happened."""
    model_provider, label = provider()
    print(f"office desk — model: {label}")
    print(f"request: {request}")
    async with await App.create(OfficeApplication, providers=[model_provider]) as app:
        result = await app.execute(
            OfficeWorkflow, WorkflowStartTextDto(text=request), owner_id="user-1", record=True
        )
        assert result.record is not None
        for step in result.record.steps:
            if step.tool_call is not None:
                print(f"  ran {step.tool_call.tool} {step.tool_call.arguments}")
        print(f"answer: {result.output_as(WorkflowFinishTextDto).text}")
        print(
            f"status: {result.status.value}, {result.spend.model_calls} model calls, "
            f"{result.spend.total_tokens} tokens"
        )
    await model_provider.aclose()


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or DEFAULT_REQUEST))
