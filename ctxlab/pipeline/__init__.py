"""The preparation pipeline: from working state to a validated, budgeted model request."""

from ctxlab.pipeline._budget import OMISSION_ORDER, input_limit, omit_for_budget
from ctxlab.pipeline._compaction import CompactionRecord, find_split
from ctxlab.pipeline._offload import Offloader, WorkspaceOffloader
from ctxlab.pipeline._prepare import Preparation, Purpose, prepare, token_cache_for, usage_notice
from ctxlab.pipeline._summary import (
    Summarizer,
    SummaryRequest,
    extractive_summarizer,
    render_summary,
    validate_summary,
)
from ctxlab.pipeline._tool_results import TRUNCATION_MARKER, head_within, truncation_notice

__all__ = [
    "OMISSION_ORDER",
    "TRUNCATION_MARKER",
    "CompactionRecord",
    "Offloader",
    "Preparation",
    "Purpose",
    "Summarizer",
    "SummaryRequest",
    "WorkspaceOffloader",
    "extractive_summarizer",
    "find_split",
    "head_within",
    "input_limit",
    "omit_for_budget",
    "prepare",
    "render_summary",
    "token_cache_for",
    "truncation_notice",
    "usage_notice",
    "validate_summary",
]
