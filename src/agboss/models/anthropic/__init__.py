"""A provider on the official `anthropic` SDK (``pip install 'agboss[anthropic]'``): Claude
models through the Messages API, with tool use."""

try:
    import anthropic as _anthropic  # noqa: F401 - only to say which extra is missing
except ImportError as missing:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "agboss.models.anthropic needs the anthropic SDK: pip install 'agboss[anthropic]'"
    ) from missing

from agboss.models.anthropic._provider import AnthropicProvider

__all__ = ["AnthropicProvider"]
