"""Stage 5: conversation reduction — light passes, then compaction by structured summary.

The prefix of the conversation is summarized; a recent tail is kept. The tail never begins with
tool results whose calls would be summarized away, always holds the latest turn (the last
assistant message and what follows it, so unfinished calls are never summarized), and is cut to
the budget it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxlab.config._config import ContextConfig
from ctxlab.config._sections import CompactionPasses
from ctxlab.exceptions import CompressionError
from ctxlab.manifest import Thresholds, Transform, TransformKind
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage
from ctxlab.messages._state import Summary
from ctxlab.pipeline._passes import mask_observations, prune_tool_output, truncate_old_arguments
from ctxlab.pipeline._pinned_task import (
    fit_task,
    pinned_task,
    summary_text,
    task_tokens,
    user_messages,
)
from ctxlab.pipeline._record import CompactionRecord
from ctxlab.pipeline._results import truncate_results
from ctxlab.pipeline._scan import ConversationScan
from ctxlab.pipeline._summary import Summarizer, render_summary
from ctxlab.pipeline._summary_calls import (
    MIN_SUMMARY_BUDGET,
    SummaryAsk,
    is_boundary,
    summarize,
    summary_tokens,
)
from ctxlab.tokens import TokenCache

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

NOTICE_ALLOWANCE = 80
"""Tokens set aside for the usage notice while its own size is not yet known."""

SUMMARY_ALLOWANCE = 2_000
"""Tokens set aside for a new summary when sizing the kept tail."""

TRUNCATION_NOTE = (
    "<system-info>{count} earlier messages were removed to fit the context window; no summary "
    "of them could be made ({reason}). Re-read files and re-run checks rather than relying on "
    "memory of that part.{previous}</system-info>"
)


@dataclass
class Reduction:
    """The outcome of stage 5."""

    conversation: Conversation
    summary: Summary | None
    transforms: list[Transform] = field(default_factory=list)
    compaction: CompactionRecord | None = None


def find_split(
    conversation: Sequence[UserMessage | AssistantMessage],
    cache: TokenCache,
    *,
    keep_tokens: int,
    keep_messages: int | None = None,
    max_tokens: int | None = None,
) -> int:
    """Index of the first kept message: the tail fits ``keep_tokens`` (or ``keep_messages``,
    never more than ``max_tokens``), starts at a valid boundary and holds at least the latest
    turn."""
    if not conversation:
        return 0
    latest = next(
        (
            i
            for i in range(len(conversation) - 1, -1, -1)
            if isinstance(conversation[i], AssistantMessage)
        ),
        len(conversation) - 1,
    )
    while latest > 0 and not is_boundary(conversation[latest]):
        latest -= 1
    start = latest
    if keep_messages is not None and len(conversation) - latest >= keep_messages:
        return start  # the latest turn already holds the count: no message more
    tokens = cache.messages(conversation[latest:])
    for index in range(latest - 1, -1, -1):
        tokens += cache.message(conversation[index])
        if keep_messages is not None:
            # A message count never overruns the room the tail was given; at a tool pair the
            # tail expands to the pair's call (000) rather than shrinking below the count.
            if max_tokens is not None and tokens > max_tokens:
                break
            if is_boundary(conversation[index]):
                start = index
                if len(conversation) - index >= keep_messages:
                    break
            continue
        if tokens > keep_tokens:
            break
        if is_boundary(conversation[index]):
            start = index
    return start


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
    force: bool = False,
    instructions: str | None = None,
    conversation_tokens: int | None = None,
) -> Reduction:
    """Apply the light passes, then compact when the trigger (or ``force``) says so."""
    # Kept as one function (past 60 lines with its signature) so that it reads in 000's order:
    # argument truncation, the due check, pruning, the split, the latest turn, the summary.
    passes = config.compaction
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

    def total() -> int:
        # The caller's count is reused while the conversation is unchanged (the common case).
        if result.conversation is conversation and conversation_tokens is not None:
            history = conversation_tokens
        else:
            history = cache.messages(result.conversation)
        return limits.fixed_tokens + summary_tokens(result.summary, cache) + history

    def due() -> bool:
        return compaction_due(
            passes, len(result.conversation), total(), limits.trigger_tokens, force=force
        )

    if not due():
        return result
    if passes.prune is not None:
        result.conversation, pruned = prune_tool_output(result.conversation, passes.prune, cache)
        result.transforms.extend(pruned)
        if pruned and not due():
            return result

    before = summary_tokens(summary, cache) + cache.messages(result.conversation)
    task = pinned_task(result.conversation, summary, cache, limits)
    pinned = task_tokens(task, cache)
    room = limits.input_limit - limits.fixed_tokens - max(summary_tokens(summary, cache), pinned)
    keep = min(limits.reserve_tokens, max(room - SUMMARY_ALLOWANCE, 0))
    split = find_split(
        result.conversation,
        cache,
        keep_tokens=keep,
        keep_messages=passes.keep_messages,
        max_tokens=max(room - SUMMARY_ALLOWANCE, 0),
    )
    by_messages = passes.trigger_messages is not None and (
        len(result.conversation) >= passes.trigger_messages
    )
    if split == 0 and by_messages and passes.keep_messages is None:
        # The message trigger works on its own: when the token tail would keep every message,
        # the tail keeps a fifth of the trigger's messages (000 pairs 30 with 10 kept).
        split = find_split(
            result.conversation,
            cache,
            keep_tokens=keep,
            keep_messages=max(2, (passes.trigger_messages or 10) // 5),
            max_tokens=max(room - SUMMARY_ALLOWANCE, 0),
        )
    prefix, tail = result.conversation[:split], result.conversation[split:]
    if not prefix:
        return result
    tail, cut = _fit_latest_turn(tail, max(room - SUMMARY_ALLOWANCE, 0), cache)
    result.transforms.extend(cut)
    task = user_messages(prefix, summary) if passes.pin_user_messages else task
    if task is not None:
        task, room = fit_task(task, tail, limits, cache)
    # The summary may take the reserve (what the tail was sized by), never more than is left.
    budget = min(limits.reserve_tokens, max(room - cache.messages(tail) - 64, MIN_SUMMARY_BUDGET))
    ask = SummaryAsk(
        config, summarizer, instructions, budget, cache, tail, task, limits.summary_limit(budget)
    )
    fields, errors = await summarize(prefix, summary, ask)
    new_summary = _new_summary(fields, errors, prefix, summary, config, task)
    if fields is None:
        result.transforms.append(Transform("summary_failed", "", "; ".join(errors)))
    result.conversation, result.summary = tail, new_summary
    after = summary_tokens(new_summary, cache) + cache.messages(tail)
    code: TransformKind = "history_compaction" if fields is not None else "history_truncation"
    result.transforms.append(Transform(code, f"{len(prefix)} messages", "", before, after))
    attempts = len(errors) + (1 if fields is not None else 0)
    result.compaction = CompactionRecord(
        new_summary.kind, before, after, len(prefix), attempts, tuple(errors)
    )
    return result


def _fit_latest_turn(
    tail: Conversation, room: int, cache: TokenCache
) -> tuple[Conversation, list[Transform]]:
    """The kept tail cut to ``room`` tokens: when the latest turn alone is too big, its tool
    results share what is left (never the calls: pairs stay whole)."""
    if cache.messages(tail) <= room:
        return tail, []
    results = sum(len(m.tool_results) for m in tail if isinstance(m, UserMessage))
    # What is never cut counts against the room: the calls, and a results turn's other blocks
    # (a harness's reminder, the user's words beside the results).
    other = sum(cache.message(_uncut(m)) for m in tail) + 64
    per_result = max((room - other) // max(results, 1), 64)
    return truncate_results(tail, per_result, None, cache)


def _uncut(message: UserMessage | AssistantMessage) -> UserMessage | AssistantMessage:
    """``message`` without its tool results (what `_fit_latest_turn` cannot cut)."""
    if not isinstance(message, UserMessage) or not message.tool_results:
        return message
    kept = tuple(b for b in message.content if not isinstance(b, ToolResultBlock))
    return message.model_copy(update={"content": kept})


def _new_summary(
    fields: dict[str, str] | None,
    errors: list[str],
    prefix: Conversation,
    previous: Summary | None,
    config: ContextConfig,
    task: str | None = None,
) -> Summary:
    """The summary standing for ``prefix`` (and ``previous``): the model's fields rendered, or
    the truncation note when every attempt failed and the fallback is on; the pinned ``task``
    before either."""
    compacted = len(prefix) + (previous.compacted_messages if previous else 0)
    if fields is not None:
        text = summary_text(render_summary(fields, config), task)
        return Summary(fields=fields, text=text, compacted_messages=compacted, task=task or "")
    if not config.compression_fallback_to_truncation:
        msg = (
            "summarization failed on every attempt and compression_fallback_to_truncation is "
            f"off, so the context was left untouched: {'; '.join(errors)}"
        )
        raise CompressionError(msg)
    # The earlier summary's fields are carried, rendered afresh: a note never nests the
    # previous note, so repeated failures cannot grow it without bound.
    earlier = (
        f"\nEarlier summary:\n{render_summary(previous.fields, config)}"
        if previous is not None and previous.fields
        else ""
    )
    note = TRUNCATION_NOTE.format(count=len(prefix), reason=errors[-1], previous=earlier)
    return Summary(
        fields=dict(previous.fields) if previous else {},
        text=summary_text(note, task),
        task=task or "",
        compacted_messages=compacted,
        kind="truncation",
    )
