"""ctxlab: see and steer what goes into each model request of an LLM agent.

The engine (this package minus ``ctxlab.widgets``) never imports Jupyter or plotting code.
"""

from ctxlab._config import (
    BudgetPolicy,
    CompactionPasses,
    ContextConfig,
    PruneConfig,
    ToolResultEviction,
    TruncateArgsConfig,
)
from ctxlab._request import ModelRequest, ToolSchema
from ctxlab._state import Summary, WorkingState
from ctxlab.exceptions import (
    CompressionError,
    ContextBudgetExceeded,
    CtxlabError,
    InvalidToolPairs,
    MessageFormatError,
    OffloadError,
    PreparationError,
    TokenizerDataError,
    UsageError,
)
from ctxlab.manifest import ContextManifest, ManifestDiff, ManifestItem, ProviderUsage, Transform
from ctxlab.materials import ContextBlock, Material, Materials, SystemPart
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    messages_from_anthropic,
    messages_to_anthropic,
)
from ctxlab.pipeline import (
    Preparation,
    Summarizer,
    SummaryRequest,
    WorkspaceOffloader,
    extractive_summarizer,
    prepare,
)
from ctxlab.tokens import ApproximateCounter, TiktokenCounter, TokenCache, TokenCount, TokenCounter

__version__ = "0.1.0"

__all__ = [
    "ApproximateCounter",
    "AssistantMessage",
    "BudgetPolicy",
    "CompactionPasses",
    "CompressionError",
    "ContextBlock",
    "ContextBudgetExceeded",
    "ContextConfig",
    "ContextManifest",
    "CtxlabError",
    "HintBlock",
    "ImageBlock",
    "InvalidToolPairs",
    "ManifestDiff",
    "ManifestItem",
    "Material",
    "Materials",
    "Message",
    "MessageFormatError",
    "ModelRequest",
    "OffloadError",
    "Preparation",
    "PreparationError",
    "ProviderUsage",
    "PruneConfig",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "SystemPart",
    "TextBlock",
    "TiktokenCounter",
    "TokenCache",
    "TokenCount",
    "TokenCounter",
    "TokenizerDataError",
    "ToolResultBlock",
    "ToolResultEviction",
    "ToolSchema",
    "ToolUseBlock",
    "Transform",
    "TruncateArgsConfig",
    "UsageError",
    "UserMessage",
    "WorkingState",
    "WorkspaceOffloader",
    "__version__",
    "extractive_summarizer",
    "messages_from_anthropic",
    "messages_to_anthropic",
    "prepare",
]
