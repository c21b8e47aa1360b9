"""Models and their providers: the chat-model protocol, `serves` resolution, the function
provider. The providers on the official SDKs are in `agboss.models.openai` and
`agboss.models.anthropic` (each its extra)."""

from agboss.models._decisions import Decision, DecisionModel, DecisionRequest, DecisionResponse
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
from agboss.models._provider import (
    MODEL_PROVIDER_MEMBERS,
    ChatModel,
    FunctionProvider,
    ModelProvider,
    ModelResolver,
    RefusingProvider,
)

__all__ = [
    "MODEL_PROVIDER_MEMBERS",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Decision",
    "DecisionModel",
    "DecisionRequest",
    "DecisionResponse",
    "FunctionProvider",
    "Message",
    "MessageRole",
    "ModelCaller",
    "ModelProvider",
    "ModelResolver",
    "RefusingProvider",
    "ToolCall",
    "ToolSchema",
    "Usage",
]
