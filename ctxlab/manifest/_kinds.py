"""The vocabularies shared by the engine and every consumer (Lab, replay, CLI, session log).

One `Literal` per concept, so a consumer matches a typed value instead of a bare string, and one
table describing each transform kind, so what a transform *means* (an offload, an omission, a
compaction, ...) is decided here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from ctxlab.exceptions import UsageError
from ctxlab.messages._state import CompactionMethod
from ctxlab.util._checks import shown

if TYPE_CHECKING:  # `_manifest` imports this module: the type only, for an annotation
    from ctxlab.manifest._manifest import Transform

__all__ = [
    "ASK_RULES",
    "TRANSFORM_KINDS",
    "AskRule",
    "CompactionMethod",
    "CompactionTrigger",
    "ItemKind",
    "Purpose",
    "TransformEffect",
    "TransformInfo",
    "TransformKind",
    "asked_by",
    "transform_info",
]

Purpose = Literal["reasoning", "compaction", "recovery", "summary"]
"""Why a request is prepared: a reasoning step, a manual or agentic compaction, an overflow
recovery (the rejected request prepared again, smaller), or a summary request."""

ItemKind = Literal[
    "system",
    "tool_schema",
    "summary",
    "message",
    "task",
    "runtime",
    "reference",
    "memory",
    "knowledge",
    "notice",
    "unrecorded",
]
"""What a manifest item is: System part, tool schema, summary, conversation message, task state,
runtime or reference material from a source, workspace memory or knowledge, the usage notice,
or what a recorded agent sent that its recording does not hold (sized, with no text)."""

# CompactionMethod (how a compaction shortened the conversation) is defined with the state it
# describes, in ``ctxlab.messages``; re-exported here with the other kinds.

CompactionTrigger = Literal["automatic", "manual", "agentic", "overflow", "on_demand"]
"""What started a compaction: the trigger line, `compress_context()`, the CompressContext tool,
a provider's context-overflow error, or a rule of the config's compaction on demand
(`ctxlab.config.OnDemandCompaction`; which rule: the event's ``asked``)."""

AskRule = Literal["task", "requests", "tokens", "idle"]
"""Which rule of the config's compaction on demand asked for a compaction: a new task, the
request count, the token mark, a pause (`ctxlab.config.OnDemandCompaction`). Here, below the
pipeline, so that a compaction's record, its order and its event all type it."""
ASK_RULES: tuple[AskRule, ...] = get_args(AskRule)

OWN_COMPACTION_METHODS = {"history_compaction": "summary", "history_truncation": "truncation"}
"""The transforms of ctxlab's own compactions, by their method (a summary, or the fallback's
truncation)."""
OWN_COMPACTIONS = tuple(OWN_COMPACTION_METHODS)
"""The transforms of ctxlab's own compactions."""


def asked_by(transform: Transform) -> AskRule | None:
    """The on-demand rule that asked for the compaction ``transform`` records (a
    ``history_compaction`` or ``history_truncation`` whose detail names one), else None."""
    # The detail of ctxlab's own compaction is the rule that asked, or empty (`pipeline._compact`).
    detail = transform.detail
    return detail if transform.kind in OWN_COMPACTIONS and detail in ASK_RULES else None


TransformKind = Literal[
    "tool_result_offload",
    "tool_result_truncation",
    "offload_failed",
    "image_offload",
    "image_drop",
    "omitted_for_budget",
    "source_unavailable",
    "args_truncation",
    "tool_output_prune",
    "observation_mask",
    "history_compaction",
    "history_truncation",
    "summary_failed",
    "tool_output_decoded",
    "workspace_trimmed",
    "workspace_refused",
    "memory_flush",
    "memory_flush_failed",
    "recorded_compaction",
    "provider_clear_tool_uses",
    "provider_clear_thinking",
    "provider_applied_edit",
    "provider_trim_tool_output",
    "provider_truncation",
    "provider_compaction",
]
"""Every action a preparation can record in its manifest."""

TransformEffect = Literal[
    "offload", "truncation", "omission", "compaction", "failure", "repair", "memory"
]
"""What a transform did to the request, for counting and drawing."""


@dataclass(frozen=True, slots=True)
class TransformInfo:
    """What one transform kind means."""

    effect: TransformEffect
    """Its family: counted together in step rows, drawn alike in the Lab."""
    placement: Literal["conversation", "references"]
    """Where the material it shrank or removed sat."""
    label: str
    """How the Lab names what was taken away ("" when nothing is drawn)."""
    why: str = ""
    """Why it was done, in words: a template over ``{target}``, ``{detail}``, ``{before}`` and
    ``{after}`` (tokens, formatted) and ``{trigger}`` (the trigger line, when known); "" falls
    back to the kind's name and detail (`ctxlab.manifest.explain_transform`)."""


TRANSFORM_KINDS: dict[TransformKind, TransformInfo] = {
    "tool_result_offload": TransformInfo(
        "offload",
        "conversation",
        "offloaded",
        "written to {detail}; a preview of {after} tokens stays",
    ),
    "tool_result_truncation": TransformInfo(
        "truncation",
        "conversation",
        "truncated",
        "cut from {before} to {after} tokens: over the tool result limit",
    ),
    "offload_failed": TransformInfo("failure", "conversation", ""),
    "image_offload": TransformInfo("offload", "conversation", "image offloaded"),
    "image_drop": TransformInfo("omission", "conversation", "image dropped"),
    "omitted_for_budget": TransformInfo(
        "omission",
        "references",
        "omitted for budget",
        "left out to fit the input limit (frees {before} tokens)",
    ),
    "source_unavailable": TransformInfo("failure", "references", ""),
    "args_truncation": TransformInfo(
        "truncation", "conversation", "", "long arguments of an old tool call shortened"
    ),
    "tool_output_prune": TransformInfo(
        "truncation",
        "conversation",
        "",
        "older tool output cut to a preview ({before} → {after} tokens)",
    ),
    "observation_mask": TransformInfo(
        "truncation",
        "conversation",
        "masked",
        "older tool output replaced by a placeholder (observation masking)",
    ),
    "provider_clear_tool_uses": TransformInfo(
        "truncation",
        "conversation",
        "cleared",
        "the provider's context editing cleared this tool result: {detail}",
    ),
    "provider_compaction": TransformInfo(
        "truncation",
        "conversation",
        "compacted",
        "the provider's compaction block stands for the {detail}",
    ),
    "provider_truncation": TransformInfo(
        "truncation",
        "conversation",
        "dropped",
        "the provider dropped the {detail}",
    ),
    "provider_trim_tool_output": TransformInfo(
        "truncation",
        "conversation",
        "trimmed",
        "the framework trimmed this older {detail} output to a preview (ToolOutputTrimmer)",
    ),
    "provider_applied_edit": TransformInfo(
        "truncation",
        "conversation",
        "",
        "the provider edited the request ({target}): {detail}",
    ),
    "provider_clear_thinking": TransformInfo(
        "truncation",
        "conversation",
        "cleared",
        "the provider's context editing removed the thinking of an older turn",
    ),
    "history_compaction": TransformInfo(
        "compaction",
        "conversation",
        "summarized",
        "{target} summarized, {before} → {after} tokens{trigger}",
    ),
    "history_truncation": TransformInfo(
        "compaction",
        "conversation",
        "dropped",
        "{target} dropped (no summary could be made), {before} → {after} tokens{trigger}",
    ),
    "summary_failed": TransformInfo("failure", "conversation", ""),
    "tool_output_decoded": TransformInfo("repair", "conversation", ""),
    "workspace_trimmed": TransformInfo("truncation", "references", "trimmed"),
    "workspace_refused": TransformInfo("failure", "references", "", "{target}: {detail}"),
    "memory_flush": TransformInfo("memory", "references", ""),
    "memory_flush_failed": TransformInfo("failure", "references", ""),
    # Not ctxlab's doing: the recorded agent's own compaction, shown where its requests restart.
    # No ghost: its tokens are the recording's (the provider's), not ctxlab's estimate.
    "recorded_compaction": TransformInfo(
        "compaction",
        "conversation",
        "",
        "the recorded session's own compaction ({detail}) {when}: {before} tokens before, by "
        "the recording{billed}",
    ),
}
assert set(TRANSFORM_KINDS) == set(get_args(TransformKind)), "every kind needs its info"


def transform_info(kind: str) -> TransformInfo:
    """The meaning of ``kind``; a `UsageError` (a `ValueError`) naming the known kinds for an
    unknown one."""
    info = TRANSFORM_KINDS.get(kind) if isinstance(kind, str) else None  # type: ignore[call-overload]
    if info is None:
        msg = f"unknown transform kind {shown(kind)}; known kinds: {', '.join(TRANSFORM_KINDS)}"
        raise UsageError(msg)
    return info  # type: ignore[no-any-return]
