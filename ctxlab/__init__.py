"""ctxlab: see and steer what goes into each model request of an LLM agent.

The engine (this package minus ``ctxlab.widgets``) never imports Jupyter or plotting code.
"""

from ctxlab._version import __version__
from ctxlab.agent import Agent, Tool, tool
from ctxlab.analysis._calibration import Calibration, CalibrationFit, calibrate
from ctxlab.analysis._cost import PRICES, CacheRules, Price
from ctxlab.analysis._recorded import (
    RecordedCompaction,
    RecordedRequest,
    recorded_compactions,
    recorded_requests,
    unrecorded_parts,
)
from ctxlab.analysis._replay import compare_configs, replay
from ctxlab.analysis._sweep import SWEEP_COLUMNS, sweep
from ctxlab.analysis._whatif import WhatIf
from ctxlab.config._config import ContextConfig
from ctxlab.config._presets import PRESETS
from ctxlab.config._sections import (
    BudgetPolicy,
    CompactionPasses,
    MaskConfig,
    PruneConfig,
    ToolResultEviction,
    TruncateArgsConfig,
)
from ctxlab.exceptions import (
    CompressionError,
    ContextBudgetExceeded,
    CtxlabError,
    InvalidConversation,
    InvalidConversationStart,
    InvalidToolPairs,
    MessageFormatError,
    OffloadError,
    PreparationError,
    StateChanged,
    TokenizerDataError,
    UsageError,
)
from ctxlab.io import detect_format, load
from ctxlab.io._transcript import Transcript, load_transcript
from ctxlab.manifest import (
    STEP_COLUMNS,
    ContextManifest,
    ManifestDiff,
    ManifestItem,
    ProviderUsage,
    Thresholds,
    Transform,
    step_row,
)
from ctxlab.materials import (
    ContextBlock,
    ContextRequest,
    ContextSource,
    Material,
    Materials,
    SystemPart,
    TextSource,
)

# The agent layer, re-exported last: it builds on everything above.
from ctxlab.materials._tasks import TaskState, TodoItem
from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    HintBlock,
    ImageBlock,
    Message,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import Summary, WorkingState
from ctxlab.models import (
    AnthropicModel,
    DemoModel,
    FunctionModel,
    Model,
    ModelResponse,
    ScriptedModel,
    messages_from_anthropic,
    messages_to_anthropic,
)
from ctxlab.pipeline import (
    Preparation,
    PreparationMemo,
    Summarizer,
    SummaryRequest,
    WorkspaceOffloader,
    extractive_summarizer,
    prepare,
)
from ctxlab.retention import CategoryRetention, Retention, measure_retention
from ctxlab.session import SessionLog
from ctxlab.sources._follow import FollowedSession, follow
from ctxlab.sources._observed import ObservedSession
from ctxlab.sources._replay import ReplaySession
from ctxlab.tokens import ApproximateCounter, TiktokenCounter, TokenCache, TokenCount, TokenCounter

__all__ = [
    "PRESETS",
    "PRICES",
    "STEP_COLUMNS",
    "SWEEP_COLUMNS",
    "Agent",
    "AnthropicModel",
    "ApproximateCounter",
    "AssistantMessage",
    "BudgetPolicy",
    "CacheRules",
    "Calibration",
    "CalibrationFit",
    "CategoryRetention",
    "CompactionPasses",
    "CompressionError",
    "ContextBlock",
    "ContextBudgetExceeded",
    "ContextConfig",
    "ContextManifest",
    "ContextRequest",
    "ContextSource",
    "CtxlabError",
    "DemoModel",
    "DocumentBlock",
    "FollowedSession",
    "FunctionModel",
    "HintBlock",
    "ImageBlock",
    "InvalidConversation",
    "InvalidConversationStart",
    "InvalidToolPairs",
    "ManifestDiff",
    "ManifestItem",
    "MaskConfig",
    "Material",
    "Materials",
    "Message",
    "MessageFormatError",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ObservedSession",
    "OffloadError",
    "Preparation",
    "PreparationError",
    "PreparationMemo",
    "Price",
    "ProviderBlock",
    "ProviderUsage",
    "PruneConfig",
    "RecordedCompaction",
    "RecordedRequest",
    "RedactedThinkingBlock",
    "ReplaySession",
    "Retention",
    "ScriptedModel",
    "SessionLog",
    "StateChanged",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "SystemPart",
    "TaskState",
    "TextBlock",
    "TextSource",
    "ThinkingBlock",
    "Thresholds",
    "TiktokenCounter",
    "TodoItem",
    "TokenCache",
    "TokenCount",
    "TokenCounter",
    "TokenizerDataError",
    "Tool",
    "ToolResultBlock",
    "ToolResultEviction",
    "ToolSchema",
    "ToolUseBlock",
    "Transcript",
    "Transform",
    "TruncateArgsConfig",
    "UsageError",
    "UserMessage",
    "WhatIf",
    "WorkingState",
    "WorkspaceOffloader",
    "__version__",
    "calibrate",
    "compare_configs",
    "detect_format",
    "extractive_summarizer",
    "follow",
    "load",
    "load_transcript",
    "measure_retention",
    "messages_from_anthropic",
    "messages_to_anthropic",
    "prepare",
    "recorded_compactions",
    "recorded_requests",
    "replay",
    "step_row",
    "sweep",
    "tool",
    "unrecorded_parts",
]


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext ctxlab``: the ``%%ctx`` and ``%ctx_budget`` magics (needs the widgets extra)."""
    # Imported here: the widgets are an optional extra, and the engine never imports Jupyter.
    from ctxlab.widgets._magics import load_ipython_extension as load

    load(ipython)
