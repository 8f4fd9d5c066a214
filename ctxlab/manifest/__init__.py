"""The context build manifest: items, transforms, validation, totals, thresholds and diffs."""

from ctxlab.manifest._explain import ItemRow, explain_transform, item_rows
from ctxlab.manifest._kinds import (
    TRANSFORM_KINDS,
    AskRule,
    CompactionMethod,
    CompactionTrigger,
    ItemKind,
    Purpose,
    TransformEffect,
    TransformInfo,
    TransformKind,
    asked_by,
    transform_info,
)
from ctxlab.manifest._manifest import (
    PLACEMENTS,
    ContextManifest,
    ManifestDiff,
    ManifestItem,
    Placement,
    ProviderUsage,
    Transform,
    Validation,
)
from ctxlab.manifest._steps import STEP_COLUMNS, StepRow, step_row, usage_columns
from ctxlab.manifest._thresholds import Thresholds, input_limit

__all__ = [
    "PLACEMENTS",
    "STEP_COLUMNS",
    "TRANSFORM_KINDS",
    "AskRule",
    "CompactionMethod",
    "CompactionTrigger",
    "ContextManifest",
    "ItemKind",
    "ItemRow",
    "ManifestDiff",
    "ManifestItem",
    "Placement",
    "ProviderUsage",
    "Purpose",
    "StepRow",
    "Thresholds",
    "Transform",
    "TransformEffect",
    "TransformInfo",
    "TransformKind",
    "Validation",
    "asked_by",
    "explain_transform",
    "input_limit",
    "item_rows",
    "step_row",
    "transform_info",
    "usage_columns",
]
