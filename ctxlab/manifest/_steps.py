"""One row per prepared request: the table the Lab, replay and the command line all show.

Built here once, from a manifest, so the three never disagree on what a column means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from ctxlab.manifest._kinds import CompactionMethod, transform_info
from ctxlab.manifest._manifest import PLACEMENTS, ContextManifest
from ctxlab.util._checks import instance_of

if TYPE_CHECKING:
    from ctxlab.messages import ProviderUsage

__all__ = [
    "STEP_COLUMNS",
    "THRESHOLDS_CONFIG",
    "THRESHOLDS_UNKNOWN",
    "StepRow",
    "UsageColumns",
    "step_row",
    "usage_columns",
]

STEP_COLUMNS: tuple[str, ...] = (
    "step",
    "request_id",
    "call",
    "purpose",
    *PLACEMENTS,
    "total",
    "exact_input",
    "input_limit",
    "notice_tokens",
    "trigger_tokens",
    "thresholds",
    "validation",
    "transforms",
    "offloads",
    "omissions",
    "truncations",
    "compaction",
    "compacted_messages",
    "recorded_compaction",
    "retention",
    "retention_control",
    "usage_input",
    "usage_output",
    "usage_cache_read",
    "usage_cache_write",
    "usage_total_input",
    "calibration",
    "calibrated",
    "calibration_flag",
)
"""The columns of a step table, in order."""

THRESHOLDS_CONFIG = "config"
"""A step row's ``thresholds``: the usage notice and trigger of ctxlab's config."""
THRESHOLDS_UNKNOWN = "unknown"
"""A step row's ``thresholds`` where the request carries none: a recording *as recorded* (its
agent's own usage notice and trigger are not in the file)."""


class UsageColumns(TypedDict):
    """The provider-usage columns of a step row: None until the response is known."""

    usage_input: int | None
    usage_output: int | None
    usage_cache_read: int | None
    usage_cache_write: int | None
    usage_total_input: int | None
    calibration: float | None


class StepRow(UsageColumns):
    """One row of a step table (`STEP_COLUMNS`, in that order), as `step_row` builds it."""

    step: int
    request_id: str
    call: str
    purpose: str
    unrecorded: int
    system: int
    tools: int
    summary: int
    conversation: int
    transient: int
    references: int
    total: int
    exact_input: int | None
    input_limit: int
    notice_tokens: int | None
    """None where the request carries no thresholds: a recording *as recorded* (its agent's own
    lines are not in the file)."""
    trigger_tokens: int | None
    thresholds: str
    """Where the lines come from: `THRESHOLDS_CONFIG` (ctxlab's config), or
    `THRESHOLDS_UNKNOWN` where the request carries none — never a 0 drawn for them."""
    validation: str
    transforms: int
    offloads: int
    omissions: int
    truncations: int
    compaction: str
    compacted_messages: int
    recorded_compaction: str
    retention: float | None
    retention_control: float | None
    calibrated: int | None
    calibration_flag: str
    """Why ``calibrated`` must not be read beside the bill unsaid (`ctxlab.analysis._calibration.
    bill_flag`: a bill of 0, an estimate more than 1.5 times off), else empty."""


def usage_columns(usage: ProviderUsage | None, estimated: int = 0) -> UsageColumns:
    """The provider-usage columns of a step row (None until the response is known):
    ``usage_total_input`` is input + cache reads + cache writes, and ``calibration`` that total
    divided by ctxlab's estimate (1.0: the estimate was exact)."""
    if usage is None:
        return UsageColumns(
            usage_input=None,
            usage_output=None,
            usage_cache_read=None,
            usage_cache_write=None,
            usage_total_input=None,
            calibration=None,
        )
    total = usage.total_input_tokens
    return UsageColumns(
        usage_input=usage.input_tokens,
        usage_output=usage.output_tokens,
        usage_cache_read=usage.cache_read_input_tokens,
        usage_cache_write=usage.cache_creation_input_tokens,
        usage_total_input=total,
        calibration=round(total / estimated, 4) if estimated > 0 else None,
    )


def step_row(
    manifest: ContextManifest,
    *,
    step: int,
    call: str = "",
    compaction: CompactionMethod | None = None,
    compacted_messages: int = 0,
    retention: float | None = None,
    retention_control: float | None = None,
) -> StepRow:
    """The row of request ``step``: tokens by placement, lines, validation, transforms counted
    by effect, the compaction it performed (``retention``: the share of the compacted span's
    items the request still holds, `ctxlab.retention`; ``retention_control``: what its kept tail
    alone holds), the recorded session's own compaction next to it (``recorded_compaction``:
    its trigger, ``manual (after)`` for one the session ended on) and the provider usage (when
    known)."""
    instance_of(manifest, ContextManifest, "manifest", "a ContextManifest (a step's manifest)")
    effects = [transform_info(t.kind).effect for t in manifest.transforms]
    lines = manifest.thresholds
    totals = manifest.totals
    return StepRow(
        step=step,
        request_id=manifest.request_id,
        call=call,
        purpose=manifest.purpose,
        unrecorded=totals["unrecorded"],
        system=totals["system"],
        tools=totals["tools"],
        summary=totals["summary"],
        conversation=totals["conversation"],
        transient=totals["transient"],
        references=totals["references"],
        total=manifest.estimated_input_tokens,
        exact_input=manifest.exact_input_tokens,
        input_limit=manifest.input_limit,
        notice_tokens=lines.notice_tokens if lines else None,
        trigger_tokens=lines.trigger_tokens if lines else None,
        thresholds=THRESHOLDS_CONFIG if lines else THRESHOLDS_UNKNOWN,
        validation=manifest.validation,
        transforms=len(effects),
        offloads=effects.count("offload"),
        omissions=effects.count("omission"),
        truncations=effects.count("truncation"),
        compaction=compaction or "",
        compacted_messages=compacted_messages,
        recorded_compaction=_recorded_compaction(manifest),
        retention=retention,
        retention_control=retention_control,
        **usage_columns(manifest.provider_usage, manifest.estimated_input_tokens),
        calibrated=None,
        calibration_flag="",
    )


def _recorded_compaction(manifest: ContextManifest) -> str:
    # The recorded session's own compactions (not ctxlab's) marked on this request: the
    # trigger of the last, "(after)" when it came after the session's last request.
    marks = [t for t in manifest.transforms if t.kind == "recorded_compaction"]
    if not marks:
        return ""
    last = marks[-1]
    return (last.detail or "recorded") + (" (after)" if last.target == "after" else "")
