"""The compaction of stage 5: the conversation's prefix summarized, a recent tail kept.

``_compaction.py`` decides whether to compact (after the light passes); `compact` does it. The
tail never begins with tool results whose calls would be summarized away, always holds the
latest turn (the last assistant message and what follows it, so unfinished calls are never
summarized), and is cut to the budget it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxlab.config._config import ContextConfig
from ctxlab.config._sections import CompactionPasses
from ctxlab.exceptions import CompressionError
from ctxlab.manifest import Transform, TransformKind
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage
from ctxlab.messages._state import Summary
from ctxlab.pipeline._pinned_task import (
    fit_task,
    pinned_task,
    summary_text,
    task_tokens,
    user_messages,
)
from ctxlab.pipeline._prepare_inputs import CompactionOrder
from ctxlab.pipeline._record import CompactionRecord
from ctxlab.pipeline._results import truncate_results
from ctxlab.pipeline._summary import Summarizer, render_summary
from ctxlab.pipeline._summary_calls import (
    MIN_SUMMARY_BUDGET,
    SummaryAsk,
    is_boundary,
    summarize,
    summary_tokens,
)
from ctxlab.tokens import TokenCache

if TYPE_CHECKING:  # `_compaction` imports this module: its types only, for annotations
    from ctxlab.pipeline._compaction import Reduction, ReductionLimits

__all__ = ["SUMMARY_ALLOWANCE", "TRUNCATION_NOTE", "compact", "find_split"]

Conversation = tuple[UserMessage | AssistantMessage, ...]

SUMMARY_ALLOWANCE = 2_000
"""Tokens set aside for a new summary when sizing the kept tail."""

TRUNCATION_NOTE = (
    "<system-info>{count} earlier messages were removed to fit the context window; no summary "
    "of them could be made ({reason}). Re-read files and re-run checks rather than relying on "
    "memory of that part.{previous}</system-info>"
)


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
    latest = _latest_reply(conversation)
    latest = latest if latest >= 0 else len(conversation) - 1
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


async def compact(
    result: Reduction,
    summary: Summary | None,
    *,
    config: ContextConfig,
    summarizer: Summarizer | None,
    order: CompactionOrder,
    cache: TokenCache,
    limits: ReductionLimits,
) -> Reduction:
    """Compact ``result``'s conversation in place, as ``order`` says: a tail kept (the latest
    turn fitted to the room), the prefix replaced by a summary (``order.instructions``: the
    caller's hint) or, when every attempt failed, by its truncation; the user's task pinned
    beside it (not ``order.keep_arrived``: on demand, the summary alone). ``summary`` is the
    conversation's summary before this step. The record and the transform name the on-demand
    rule that asked (``order.asked``), if one did."""
    passes, keep_arrived = config.compaction, order.keep_arrived
    before = summary_tokens(summary, cache) + cache.messages(result.conversation)
    # On demand, the documented shape: the server's signed block alone stands for what it
    # summarizes (the application adds nothing beside it), so no task is pinned — at a new task
    # the pinned one would be the old task's.
    task = None if keep_arrived else pinned_task(result.conversation, summary, cache, limits)
    pinned = task_tokens(task, cache)
    room = limits.input_limit - limits.fixed_tokens - max(summary_tokens(summary, cache), pinned)
    if keep_arrived:  # on demand: everything before the latest arrivals is summarized
        split = arrived_split(result.conversation)
    else:
        split = _split(result.conversation, passes, cache, limits, max(room - SUMMARY_ALLOWANCE, 0))
    prefix, tail = result.conversation[:split], result.conversation[split:]
    if not prefix:
        return result
    tail, cut = _fit_latest_turn(tail, max(room - SUMMARY_ALLOWANCE, 0), cache)
    result.transforms.extend(cut)
    task = user_messages(prefix, summary) if passes.pin_user_messages and not keep_arrived else task
    if task is not None:
        task, room = fit_task(task, tail, limits, cache)
    # The summary may take the reserve (what the tail was sized by), never more than is left.
    budget = min(limits.reserve_tokens, max(room - cache.messages(tail) - 64, MIN_SUMMARY_BUDGET))
    limit = limits.summary_limit(budget)
    asked = SummaryAsk(config, summarizer, order.instructions, budget, cache, tail, task, limit)
    fields, errors = await summarize(prefix, summary, asked)
    new_summary = _new_summary(fields, errors, prefix, summary, config, task)
    if fields is None:
        result.transforms.append(Transform("summary_failed", "", "; ".join(errors)))
    result.conversation, result.summary = tail, new_summary
    after = summary_tokens(new_summary, cache) + cache.messages(tail)
    code: TransformKind = "history_compaction" if fields is not None else "history_truncation"
    # The rule that asked, in the manifest too: a manifest read alone (a fork's run, a session
    # log) then says the compaction was asked for (`ctxlab.manifest.asked_by`).
    detail = order.asked or ""
    result.transforms.append(Transform(code, f"{len(prefix)} messages", detail, before, after))
    attempts = len(errors) + (1 if fields is not None else 0)
    result.compaction = CompactionRecord(
        new_summary.kind, before, after, len(prefix), attempts, tuple(errors), asked=order.asked
    )
    return result


def arrived_split(conversation: Conversation) -> int:
    """Where the messages that arrived after the latest reply start — or that reply, when they
    answer its calls (a result is never sent without its call)."""
    latest = _latest_reply(conversation)
    arrived = conversation[latest + 1 :]
    if latest < 0 or any(isinstance(m, UserMessage) and m.tool_results for m in arrived):
        return max(latest, 0)
    return latest + 1 if arrived else latest


def _latest_reply(conversation: Sequence[UserMessage | AssistantMessage]) -> int:
    """The index of the conversation's latest reply (-1: none)."""
    for index in range(len(conversation) - 1, -1, -1):
        if isinstance(conversation[index], AssistantMessage):
            return index
    return -1


def _split(
    conversation: Conversation,
    passes: CompactionPasses,
    cache: TokenCache,
    limits: ReductionLimits,
    room: int,
) -> int:
    """Where the kept tail starts: the reserve's tokens (within ``room``, what is left beside
    the summary) or the configured messages."""
    keep = min(limits.reserve_tokens, room)
    split = find_split(
        conversation, cache, keep_tokens=keep, keep_messages=passes.keep_messages, max_tokens=room
    )
    by_messages = passes.trigger_messages is not None and (
        len(conversation) >= passes.trigger_messages
    )
    if split == 0 and by_messages and passes.keep_messages is None:
        # The message trigger works on its own: when the token tail would keep every message,
        # the tail keeps a fifth of the trigger's messages (000 pairs 30 with 10 kept).
        split = find_split(
            conversation,
            cache,
            keep_tokens=keep,
            keep_messages=max(2, (passes.trigger_messages or 10) // 5),
            max_tokens=room,
        )
    return split


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
