"""Models and their providers: the chat-model protocol, `serves` resolution, the function
provider. The providers on the official SDKs are in `agboss.models.openai` and
`agboss.models.anthropic` (each its extra)."""

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
    "ToolCall",
    "ToolSchema",
    "Usage",
]
