"""Stage 5: conversation reduction — light passes, then compaction by structured summary.

`reduce_conversation` runs the light passes (old arguments truncated, observations masked,
tool output pruned) and checks whether compaction is due between them; the compaction itself
(the prefix summarized, a recent tail kept) is ``_compact.py``'s `compact`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ctxlab.config._config import ContextConfig
from ctxlab.config._sections import CompactionPasses
from ctxlab.manifest import Thresholds, Transform
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._state import Summary
from ctxlab.pipeline._compact import compact, find_split
from ctxlab.pipeline._passes import mask_observations, prune_tool_output, truncate_old_arguments
from ctxlab.pipeline._prepare_inputs import CompactionOrder
from ctxlab.pipeline._record import CompactionRecord
from ctxlab.pipeline._scan import ConversationScan
from ctxlab.pipeline._summary import Summarizer
from ctxlab.pipeline._summary_calls import summary_tokens
from ctxlab.tokens import TokenCache
from ctxlab.util._checks import whole_number

__all__ = [
    "CompactionRecord",
    "Reduction",
    "compaction_due",
    "find_split",
    "reduce_conversation",
    "reduction_due",
    "summary_tokens",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]

_NO_ORDER = CompactionOrder()
"""The order of a reduction given none: at the config's lines (frozen: shared)."""

NOTICE_ALLOWANCE = 80
"""Tokens set aside for the usage notice while its own size is not yet known."""


@dataclass
class Reduction:
    """The outcome of stage 5."""

    conversation: Conversation
    summary: Summary | None
    transforms: list[Transform] = field(default_factory=list)
    compaction: CompactionRecord | None = None


def compaction_due(
    passes: CompactionPasses, messages: int, total: int, trigger: int, *, force: bool = False
) -> bool:
    """Whether stage 5 compacts: forced, or (when enabled) at the message or token trigger."""
    by_messages = passes.trigger_messages is not None and messages >= passes.trigger_messages
    return force or (passes.enabled and (by_messages or total > trigger))


@dataclass(slots=True)  # built at every step: a frozen dataclass's __init__ costs 1–2 µs more
class ReductionLimits:
    """The token lines stage 5 works with."""

    fixed_tokens: int
    """System + tools + material: everything but summary and conversation."""
    trigger_tokens: int
    """Compact above this total."""
    reserve_tokens: int
    """Target size of the kept tail."""
    input_limit: int
    """The request's hard limit."""
    context_size: int = 0
    """The window the lines refer to (0: unknown)."""
    safety_margin: int = 0

    def summary_limit(self, budget: int) -> int:
        """The input limit of a summary request whose answer may take ``budget`` tokens: the
        window less that answer (JSON adds about a fifth) and the margin, never above the
        reasoning requests' limit."""
        if not self.context_size:
            return self.input_limit
        # Any budget a sum of counts reaches; not one too large for the float of its fifth.
        budget = whole_number(budget, "budget", high=sys.maxsize)
        answer = int(budget * 1.2) + 64
        return max(min(self.input_limit, self.context_size - answer - self.safety_margin), 0)

    @classmethod
    def of(
        cls, lines: Thresholds, fixed_tokens: int, trigger_override: int | None = None
    ) -> ReductionLimits:
        """The limits of a request with these lines; ``fixed_tokens`` is System + tools +
        material. ``trigger_override`` replaces the trigger (the CompressContext tool compacts
        from the usage-notice line)."""
        # The usage notice is added after reduction; its room is kept while it can appear.
        allowance = NOTICE_ALLOWANCE if lines.notice_tokens < lines.trigger_tokens else 0
        return cls(
            fixed_tokens=fixed_tokens + allowance,
            trigger_tokens=lines.trigger_tokens if trigger_override is None else trigger_override,
            reserve_tokens=lines.reserve_tokens,
            input_limit=lines.input_limit,
            context_size=lines.context_size if lines.output_reservation else 0,
            safety_margin=lines.safety_margin,
        )


def reduction_due(
    scan: ConversationScan,
    summary: Summary | None,
    *,
    config: ContextConfig,
    cache: TokenCache,
    limits: ReductionLimits,
    force: bool = False,
) -> bool:
    """Whether stage 5 has anything to do: a light pass is configured, or compaction is due.
    When it is not (the common step), the stage is skipped outright."""
    total = limits.fixed_tokens + summary_tokens(summary, cache) + scan.tokens
    light = config.compaction.truncate_args is not None or config.compaction.mask is not None
    return light or compaction_due(
        config.compaction, len(scan.conversation), total, limits.trigger_tokens, force=force
    )


async def reduce_conversation(
    conversation: Conversation,
    summary: Summary | None,
    *,
    config: ContextConfig,
    cache: TokenCache,
    limits: ReductionLimits,
    summarizer: Summarizer | None,
    order: CompactionOrder | None = None,
    conversation_tokens: int | None = None,
) -> Reduction:
    """Apply the light passes, then compact when the trigger (or ``order.force``) says so, as
    ``order`` says (its hint, what it keeps, the on-demand rule that asked: on the record).

    In 000's order: argument truncation and masking, the due check, pruning (and the check
    again), then the compaction: the split, the latest turn, the summary.
    """
    passes = config.compaction
    order = order or _NO_ORDER
    force = order.force
    result, conversation_tokens = _light_passes(
        conversation, summary, passes, cache, conversation_tokens
    )

    def due() -> bool:
        total = _total(result, conversation, conversation_tokens, limits, cache)
        return compaction_due(
            passes, len(result.conversation), total, limits.trigger_tokens, force=force
        )

    if not due():
        return result
    if passes.prune is not None:
        result.conversation, pruned = prune_tool_output(result.conversation, passes.prune, cache)
        result.transforms.extend(pruned)
        if pruned and not due():
            return result
    return await compact(
        result,
        summary,
        config=config,
        summarizer=summarizer,
        order=order,
        cache=cache,
        limits=limits,
    )


def _light_passes(
    conversation: Conversation,
    summary: Summary | None,
    passes: CompactionPasses,
    cache: TokenCache,
    conversation_tokens: int | None,
) -> tuple[Reduction, int | None]:
    """Old tool arguments truncated and observations masked, each when configured. Returns the
    result and the conversation's tokens (counted here when the truncation needed them)."""
    result = Reduction(conversation, summary)
    if passes.truncate_args is not None:
        if conversation_tokens is None:
            conversation_tokens = cache.messages(conversation)
        result.conversation, moved = truncate_old_arguments(
            conversation, passes.truncate_args, conversation_tokens
        )
        result.transforms.extend(moved)
    if passes.mask is not None:
        masked, hidden = mask_observations(result.conversation, passes.mask, cache)
        if hidden:
            result.conversation = masked
            result.transforms.extend(hidden)
    return result, conversation_tokens


def _total(
    result: Reduction,
    conversation: Conversation,
    conversation_tokens: int | None,
    limits: ReductionLimits,
    cache: TokenCache,
) -> int:
    """The request's tokens with ``result``'s summary and conversation."""
    # The caller's count is reused while the conversation is unchanged (the common case).
    if result.conversation is conversation and conversation_tokens is not None:
        history = conversation_tokens
    else:
        history = cache.messages(result.conversation)
    return limits.fixed_tokens + summary_tokens(result.summary, cache) + history
