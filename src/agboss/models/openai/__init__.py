"""Providers on the official `openai` SDK (``pip install 'agboss[openai]'``): OpenAI's Chat
Completions and Responses APIs, and any OpenAI-compatible server by its base URL."""

try:
    import openai as _openai  # noqa: F401 - only to say which extra is missing
except ImportError as missing:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "agboss.models.openai needs the openai SDK: pip install 'agboss[openai]'"
    ) from missing

from agboss.models.openai._provider import OpenAIApi, OpenAICompatibleProvider, OpenAIProvider

__all__ = ["OpenAIApi", "OpenAICompatibleProvider", "OpenAIProvider"]
