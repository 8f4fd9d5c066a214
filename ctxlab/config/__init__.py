"""The context configuration: `ContextConfig` and its parts, the tunable fields the Lab draws as
controls, and the presets that reproduce other frameworks' policies."""

from ctxlab.config._config import ContextConfig
from ctxlab.config._fields import TunableField, tunable_fields
from ctxlab.config._on_demand import OnDemandCompaction
from ctxlab.config._presets import PRESETS
from ctxlab.config._sections import (
    BudgetPolicy,
    ClearThinking,
    ClearToolUses,
    CompactionPasses,
    MaskConfig,
    ProviderEdits,
    PruneConfig,
    ToolResultEviction,
    TrimToolOutputs,
    TruncateArgsConfig,
)

__all__ = [
    "PRESETS",
    "BudgetPolicy",
    "ClearThinking",
    "ClearToolUses",
    "CompactionPasses",
    "ContextConfig",
    "MaskConfig",
    "OnDemandCompaction",
    "ProviderEdits",
    "PruneConfig",
    "ToolResultEviction",
    "TrimToolOutputs",
    "TruncateArgsConfig",
    "TunableField",
    "tunable_fields",
]
