"""Model backends behind one interface, chosen by name: `get_model("openai:gpt-4o")`, `hf:PATH`, `replay:FILE`, `scripted:NAME`."""

from kernelmosaic.contracts.messages import Message, ModelReply, ToolCall, ToolSpec, Usage
from kernelmosaic.models.base import (
    BadResponse,
    ModelBackend,
    ModelConfigError,
    ModelError,
    ModelUnavailable,
    RateLimited,
    ReplayExhausted,
    Timeout,
)
from kernelmosaic.models.registry import backend_schemes, get_model, register_backend
from kernelmosaic.models.scripted import ScriptedModel, register_script

# replay, openai and hf modules are not imported here: replay reads the store's trajectory types
# (which import this package's messages), and hf pulls in transformers.
__all__ = [
    "ModelBackend",
    "ModelError",
    "RateLimited",
    "Timeout",
    "BadResponse",
    "ModelUnavailable",
    "ModelConfigError",
    "ReplayExhausted",
    "Message",
    "ModelReply",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "get_model",
    "register_backend",
    "backend_schemes",
    "ScriptedModel",
    "register_script",
]
