"""ctxlab: see and steer what goes into each model request of an LLM agent.

The engine (this package minus ``ctxlab.widgets``) never imports Jupyter or plotting code.

``__all__`` holds what a notebook imports: the agent, configs and sources, messages, models,
loading and replaying recordings, the what-if and sweeps, the common errors. Every other public
name lives in the package of its concept (``ctxlab.messages``, ``ctxlab.manifest``,
``ctxlab.analysis``, ...) and is still importable from here (`PACKAGE_NAMES`).
"""

import importlib
from typing import Any

from ctxlab._version import __version__
from ctxlab.agent import Agent, Tool, tool
from ctxlab.analysis._bill_check import cache_check
from ctxlab.analysis._calibration import calibrate
from ctxlab.analysis._cost import PRICES, Price, price_for
from ctxlab.analysis._recorded import recorded_compactions, recorded_requests
from ctxlab.analysis._replay import compare_configs, replay
from ctxlab.analysis._sweep import sweep
from ctxlab.analysis._unrecorded import unrecorded_part
from ctxlab.analysis._whatif import WhatIf
from ctxlab.config._config import ContextConfig
from ctxlab.config._presets import PRESETS
from ctxlab.exceptions import (
    ContextBudgetExceeded,
    CtxlabError,
    MessageFormatError,
    PreparationError,
    UsageError,
)
from ctxlab.io import detect_format, load, sessions
from ctxlab.io._transcript import Transcript, load_transcript
from ctxlab.manifest import ContextManifest, Thresholds
from ctxlab.materials import (
    ContextBlock,
    ContextRequest,
    ContextSource,
    Materials,
    SystemPart,
    TextSource,
)

# The agent layer, re-exported last: it builds on everything above.
from ctxlab.materials._tasks import TaskState, TodoItem
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._state import WorkingState
from ctxlab.models import AnthropicModel, DemoModel, FunctionModel, Model, ScriptedModel
from ctxlab.pipeline import extractive_summarizer, prepare
from ctxlab.retention import measure_retention
from ctxlab.session import SessionLog
from ctxlab.sources._follow import follow
from ctxlab.sources._observed import ObservedSession
from ctxlab.sources._replay import ReplaySession
from ctxlab.tokens import ApproximateCounter, TiktokenCounter

__all__ = [
    "PRESETS",
    "PRICES",
    "Agent",
    "AnthropicModel",
    "ApproximateCounter",
    "AssistantMessage",
    "ContextBlock",
    "ContextBudgetExceeded",
    "ContextConfig",
    "ContextManifest",
    "ContextRequest",
    "ContextSource",
    "CtxlabError",
    "DemoModel",
    "FunctionModel",
    "HintBlock",
    "ImageBlock",
    "Materials",
    "MessageFormatError",
    "Model",
    "ObservedSession",
    "PreparationError",
    "Price",
    "ReplaySession",
    "ScriptedModel",
    "SessionLog",
    "SystemPart",
    "TaskState",
    "TextBlock",
    "TextSource",
    "Thresholds",
    "TiktokenCounter",
    "TodoItem",
    "Tool",
    "ToolResultBlock",
    "ToolUseBlock",
    "Transcript",
    "UsageError",
    "UserMessage",
    "WhatIf",
    "WorkingState",
    "__version__",
    "cache_check",
    "calibrate",
    "compare_configs",
    "detect_format",
    "extractive_summarizer",
    "follow",
    "load",
    "load_transcript",
    "measure_retention",
    "prepare",
    "price_for",
    "recorded_compactions",
    "recorded_requests",
    "replay",
    "sessions",
    "sweep",
    "tool",
    "unrecorded_part",
]

PACKAGE_NAMES: dict[str, str] = {
    "BudgetPolicy": "ctxlab.config",
    "CacheAgreement": "ctxlab.analysis",
    "cache_agreement": "ctxlab.analysis",
    "CacheRules": "ctxlab.analysis",
    "Calibration": "ctxlab.analysis",
    "CalibrationFit": "ctxlab.analysis",
    "CategoryRetention": "ctxlab.retention",
    "Census": "ctxlab.io",
    "FORMATS": "ctxlab.io",
    "SessionFormat": "ctxlab.io",
    "register_format": "ctxlab.io",
    "FormatCase": "ctxlab.io",
    "check_contract": "ctxlab.io",
    "CompactionPasses": "ctxlab.config",
    "CompressionError": "ctxlab.exceptions",
    "ConversationBuilder": "ctxlab.io",
    "DocumentBlock": "ctxlab.messages",
    "FollowedSession": "ctxlab.sources",
    "ForkError": "ctxlab.exceptions",
    "ForkPoint": "ctxlab.agent",
    "InvalidConversation": "ctxlab.exceptions",
    "InvalidConversationStart": "ctxlab.exceptions",
    "InvalidToolPairs": "ctxlab.exceptions",
    "ManifestDiff": "ctxlab.manifest",
    "ManifestItem": "ctxlab.manifest",
    "MaskConfig": "ctxlab.config",
    "OnDemandCompaction": "ctxlab.config",
    "CompactionSite": "ctxlab.analysis",
    "compaction_sites": "ctxlab.analysis",
    "documented_threshold": "ctxlab.analysis",
    "sites_frame": "ctxlab.analysis",
    "MemorylessModel": "ctxlab.models",
    "Material": "ctxlab.materials",
    "Message": "ctxlab.messages",
    "ModelRequest": "ctxlab.messages",
    "ModelResponse": "ctxlab.models",
    "ResponseCache": "ctxlab.models",
    "RetriesExhausted": "ctxlab.exceptions",
    "OffloadError": "ctxlab.exceptions",
    "Preparation": "ctxlab.pipeline",
    "PreparationMemo": "ctxlab.pipeline",
    "ProviderBlock": "ctxlab.messages",
    "ProviderUsage": "ctxlab.messages",
    "PruneConfig": "ctxlab.config",
    "RecordedCompaction": "ctxlab.analysis",
    "RecordedRequest": "ctxlab.analysis",
    "RedactedThinkingBlock": "ctxlab.messages",
    "Retention": "ctxlab.retention",
    "STEP_COLUMNS": "ctxlab.manifest",
    "SWEEP_COLUMNS": "ctxlab.analysis",
    "StateChanged": "ctxlab.exceptions",
    "Summarizer": "ctxlab.pipeline",
    "Summary": "ctxlab.messages",
    "SummaryRequest": "ctxlab.pipeline",
    "ThinkingBlock": "ctxlab.messages",
    "TokenCache": "ctxlab.tokens",
    "TokenCount": "ctxlab.tokens",
    "TokenCounter": "ctxlab.tokens",
    "ToktokCounter": "ctxlab.tokens",
    "CountStore": "ctxlab.tokens",
    "UserLines": "ctxlab.retention",
    "default_counter": "ctxlab.tokens",
    "built_transcript": "ctxlab.io",
    "TokenizerDataError": "ctxlab.exceptions",
    "ToolResultEviction": "ctxlab.config",
    "ToolSchema": "ctxlab.messages",
    "Transform": "ctxlab.manifest",
    "TruncateArgsConfig": "ctxlab.config",
    "WorkspaceOffloader": "ctxlab.pipeline",
    "messages_from_anthropic": "ctxlab.models",
    "messages_to_anthropic": "ctxlab.models",
    "step_row": "ctxlab.manifest",
    "sweep_findings": "ctxlab.analysis",
    "unrecorded_parts": "ctxlab.analysis",
    "UnrecordedPart": "ctxlab.analysis",
    "UNRECORDED_PROFILES": "ctxlab.analysis",
    "Unrecorded": "ctxlab.materials",
}
"""Public names importable from ``ctxlab`` (for code written against earlier releases too), but
not in ``__all__``: each is documented, and best imported, from its package (the value). Forks
live in ``ctxlab.fork`` (``from ctxlab.fork import fork, run_forward``)."""


def __getattr__(name: str) -> Any:
    # The names of `PACKAGE_NAMES`, looked up in their package on first use (each package is
    # loaded by ``import ctxlab`` already: this is a lookup, not a lazy import).
    package = PACKAGE_NAMES.get(name)
    if package is None:
        msg = f"module 'ctxlab' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(package), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *PACKAGE_NAMES})


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext ctxlab``: the ``%%ctx`` and ``%ctx_budget`` magics (needs the widgets extra)."""
    # Imported here: the widgets are an optional extra, and the engine never imports Jupyter.
    from ctxlab.widgets._magics import load_ipython_extension as load

    load(ipython)
