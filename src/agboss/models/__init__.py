"""Models and their providers: the chat-model protocol, `serves` resolution, real providers."""

from agboss.models._messages import (
    ChatRequest,
    ChatResponse,
    Message,
    MessageRole,
    ModelCaller,
    ToolCall,
    ToolSchema,
    Usage,
)
from agboss.models._openai import OpenAICompatibleProvider
from agboss.models._provider import ChatModel, FunctionProvider, ModelProvider, ModelResolver

__all__ = [
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "FunctionProvider",
    "Message",
    "MessageRole",
    "ModelCaller",
    "ModelProvider",
    "ModelResolver",
    "OpenAICompatibleProvider",
    "ToolCall",
    "ToolSchema",
    "Usage",
]
