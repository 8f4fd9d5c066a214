"""The preparation pipeline: from working state to a validated, budgeted model request."""

from ctxlab.manifest import Purpose, Thresholds, input_limit
from ctxlab.pipeline._budget import OMISSION_ORDER, SelectionPolicy, default_order, omit_for_budget
from ctxlab.pipeline._compaction import (
    CompactionRecord,
    Reduction,
    ReductionLimits,
    find_split,
    reduce_conversation,
    reduction_due,
)
from ctxlab.pipeline._handover import extractive_summarizer
from ctxlab.pipeline._idle import idle_threshold, pauses
from ctxlab.pipeline._layout import Layout, ManifestFactory, lay_out, validate
from ctxlab.pipeline._offload import Offloader, WorkspaceOffloader
from ctxlab.pipeline._preparation_memo import PreparationMemo
from ctxlab.pipeline._prepare import (
    CallerInputs,
    CompactionOrder,
    Preparation,
    prepare,
)
from ctxlab.pipeline._reported_edits import as_reported, reported_items
from ctxlab.pipeline._results import TRUNCATION_MARKER, head_within, truncation_notice
from ctxlab.pipeline._scan import ConversationScan, message_items, scan_conversation
from ctxlab.pipeline._stages import (
    Budgeted,
    FixedPart,
    budget_materials,
    fixed_part,
    project,
    usage_notice,
)
from ctxlab.pipeline._summary import (
    Summarizer,
    SummaryRequest,
    render_summary,
    summary_instruction,
    validate_summary,
)

__all__ = [
    "OMISSION_ORDER",
    "TRUNCATION_MARKER",
    "Budgeted",
    "CallerInputs",
    "CompactionOrder",
    "CompactionRecord",
    "ConversationScan",
    "FixedPart",
    "Layout",
    "ManifestFactory",
    "Offloader",
    "Preparation",
    "PreparationMemo",
    "Purpose",
    "Reduction",
    "ReductionLimits",
    "SelectionPolicy",
    "Summarizer",
    "SummaryRequest",
    "Thresholds",
    "WorkspaceOffloader",
    "as_reported",
    "budget_materials",
    "default_order",
    "extractive_summarizer",
    "find_split",
    "fixed_part",
    "head_within",
    "idle_threshold",
    "input_limit",
    "lay_out",
    "message_items",
    "omit_for_budget",
    "pauses",
    "prepare",
    "project",
    "reduce_conversation",
    "reduction_due",
    "render_summary",
    "reported_items",
    "scan_conversation",
    "summary_instruction",
    "truncation_notice",
    "usage_notice",
    "validate",
    "validate_summary",
]
