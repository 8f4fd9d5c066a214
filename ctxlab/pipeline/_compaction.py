"""Stage 5: conversation reduction — light passes, then compaction by structured summary.

The prefix of the conversation is summarized; a recent tail is kept. The tail never begins with
tool results whose calls would be summarized away, always holds the latest turn (the last
assistant message and what follows it, so unfinished calls are never summarized), and is cut to
the budget it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxlab._config import CompactionPasses, ContextConfig
from ctxlab._state import Summary
from ctxlab.exceptions import CompressionError, ContextOverflowError
from ctxlab.manifest import CompactionMethod, Thresholds, Transform, TransformKind
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline._passes import mask_observations, prune_tool_output, truncate_old_arguments
from ctxlab.pipeline._results import truncate_results
from ctxlab.pipeline._scan import ConversationScan
from ctxlab.pipeline._summary import (
    Summarizer,
    SummaryRequest,
    instruction_tokens,
    render_summary,
    validate_summary,
)
from ctxlab.retention import Retention
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache, head_within

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

MIN_SUMMARY_BUDGET = 256
"""The smallest budget a summary is given, however full the window."""

SUMMARY_MARGIN = 0.97
"""The share of a summary request's limit its pieces are sized to (the rest absorbs how a
model adapter frames the request)."""

PINNED_TASK_SHARE = 0.4
"""The user's first message is kept verbatim beside the summary while it takes at most this
share of the input limit (a larger one is left to the summary, which states the task)."""

TASK_HEADING = "<system-info>The user's first message (the task), kept verbatim:\n"
TASK_END = "</system-info>"

TRUNCATION_NOTE = (
    "<system-info>{count} earlier messages were removed to fit the context window; no summary "
    "of them could be made ({reason}). Re-read files and re-run checks rather than relying on "
    "memory of that part.{previous}</system-info>"
)


@dataclass(frozen=True)
class CompactionRecord:
    """What one compaction did."""

    method: CompactionMethod
    """``summary``, or ``truncation`` when summarization failed and the fallback dropped messages."""
    tokens_before: int
    """Summary + conversation tokens before."""
    tokens_after: int
    """Summary + conversation tokens after."""
    messages_compacted: int
    """Messages replaced by the summary (or dropped)."""
    attempts: int
    """Summarization attempts made."""
    errors: tuple[str, ...] = ()
    """Why attempts failed."""
    retention: Retention | None = None
    """What the request after the compaction still holds of the compacted span, measured on
    the original messages by `ctxlab.retention` (set by whoever holds them — a replay, the
    agent — never by the pipeline, which would grade its own work)."""

    @property
    def kind(self) -> CompactionMethod:
        """Deprecated alias of `method` (kept for one release)."""
        return self.method


@dataclass
class Reduction:
    """The outcome of stage 5."""

    conversation: Conversation
    summary: Summary | None
    transforms: list[Transform] = field(default_factory=list)
    compaction: CompactionRecord | None = None


def summary_tokens(summary: Summary | None, cache: TokenCache) -> int:
    """Tokens of the summary message."""
    return 0 if summary is None else cache.text(summary.text) + MESSAGE_OVERHEAD


def _is_boundary(message: UserMessage | AssistantMessage) -> bool:
    # A kept tail may start at an assistant turn or at a user turn that answers no call.
    return isinstance(message, AssistantMessage) or not message.tool_results


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
    while latest > 0 and not _is_boundary(conversation[latest]):
        latest -= 1
    start = latest
    tokens = cache.messages(conversation[latest:])
    for index in range(latest - 1, -1, -1):
        tokens += cache.message(conversation[index])
        if keep_messages is not None:
            # A message count never overruns the room the tail was given; at a tool pair the
            # tail expands to the pair's call (000) rather than shrinking below the count.
            if max_tokens is not None and tokens > max_tokens:
                break
            if _is_boundary(conversation[index]):
                start = index
                if len(conversation) - index >= keep_messages:
                    break
            continue
        if tokens > keep_tokens:
            break
        if _is_boundary(conversation[index]):
            start = index
    return start


@dataclass(frozen=True)
class _Ask:
    """What every summary request of one compaction shares."""

    config: ContextConfig
    summarizer: Summarizer | None
    instructions: str | None
    budget: int
    cache: TokenCache
    kept: Conversation
    pinned_task: str | None
    input_limit: int


def _request(
    ask: _Ask, messages: Conversation, previous: Summary | None, attempt: int, kept: Conversation
) -> SummaryRequest:
    return SummaryRequest(
        messages=messages,
        previous_summary=previous,
        schema=ask.config.summary_schema,
        prompt=ask.config.compression_prompt,
        instructions=ask.instructions,
        attempt=attempt,
        template=ask.config.compaction.summary_prompt,
        budget_tokens=ask.budget,
        count=ask.cache.text,
        kept=kept,
        pinned_task=ask.pinned_task,
        input_limit=ask.input_limit,
    )


def summary_request_tokens(request: SummaryRequest, cache: TokenCache) -> int:
    """The input tokens of the plain request for ``request`` (its span, then the instruction;
    no System, no tools): what a summary call must fit when its cached form does not."""
    instruction = instruction_tokens(request, cache.text) + MESSAGE_OVERHEAD
    return cache.messages(request.messages) + instruction


def _chunks(
    ask: _Ask, prefix: Conversation, previous: Summary | None, limit: int
) -> list[Conversation]:
    """``prefix`` in pieces whose summary requests each fit ``limit`` (with a running summary
    of ``ask.budget`` tokens carried in each); pieces start at valid boundaries, so no tool
    pair is split; a message too large alone has its tool results cut for the request."""
    probe = _request(ask, (), previous, 1, ())
    carried = max(ask.budget, summary_tokens(previous, ask.cache))
    room = max(limit - summary_request_tokens(probe, ask.cache) - carried - 64, 256)
    pieces: list[Conversation] = []
    start = 0
    while start < len(prefix):
        end, used = start, 0
        while end < len(prefix):
            # A turn at a time: a boundary message and the results that answer it.
            after = end + 1
            while after < len(prefix) and not _is_boundary(prefix[after]):
                after += 1
            size = ask.cache.messages(prefix[end:after])
            if used + size > room and end > start:
                break
            used += size
            end = after
        piece = prefix[start:end]
        over = ask.cache.messages(piece) - room
        if over > 0:
            piece, _ = truncate_results(piece, _result_cap(piece, over, ask.cache), None, ask.cache)
            over = ask.cache.messages(piece) - room
        if over > 0:  # a turn too large in its own text (a pasted log, a long reply)
            piece = _cut_texts(piece, over, ask.cache)
        pieces.append(piece)
        start = end
    return pieces


_CUT_NOTE = "[... cut here for the summary request]"


def _cut_input(block: ToolUseBlock, keep: int, cache: TokenCache) -> ToolUseBlock:
    """``block`` with its longest string argument cut so the call takes about ``keep`` tokens
    (a file's content the agent wrote, a long script)."""
    strings = {k: v for k, v in block.input.items() if isinstance(v, str)}
    if not strings:
        return block
    key = max(strings, key=lambda k: len(strings[k]))
    rest = cache.block(block) - cache.text(strings[key])
    head = head_within(strings[key], max(keep - rest, 16), cache.counter.count_text)
    return block.evolve(input={**block.input, key: f"{head}\n{_CUT_NOTE}"})


def _cut_texts(piece: Conversation, over: int, cache: TokenCache) -> Conversation:
    """``piece`` with its largest text blocks cut at a line end until ``over`` tokens are
    freed, for the summary request only (the conversation keeps them whole)."""
    out = list(piece)
    while over > 0:
        found = max(
            (
                (cache.block(b), i, j)
                for i, m in enumerate(out)
                for j, b in enumerate(m.content)
                if isinstance(b, TextBlock | ToolUseBlock)
            ),
            default=None,
        )
        if found is None or found[0] <= 64:
            break
        size, i, j = found
        block = out[i].content[j]
        keep = max(size - over - 32, 32)
        cut: TextBlock | ToolUseBlock
        if isinstance(block, TextBlock):
            head = head_within(block.text, keep, cache.counter.count_text)
            cut = block.evolve(text=f"{head}\n{_CUT_NOTE}")
        else:
            assert isinstance(block, ToolUseBlock)
            cut = _cut_input(block, keep, cache)
            if cut == block:
                break
        content = (*out[i].content[:j], cut, *out[i].content[j + 1 :])
        message = out[i]
        out[i] = (
            UserMessage(content=content)
            if isinstance(message, UserMessage)
            else AssistantMessage(content=content)
        )
        over -= size - cache.block(cut)
    return tuple(out)


def _result_cap(piece: Conversation, over: int, cache: TokenCache) -> int:
    """The largest per-result size that frees ``over`` tokens of ``piece`` (only the largest
    results are cut, each to the same size)."""
    sizes = sorted(
        (cache.block(r) for m in piece if isinstance(m, UserMessage) for r in m.tool_results),
        reverse=True,
    )
    cap = sizes[0] if sizes else 0
    # Each cut result gains the truncation marker (about 40 tokens).
    while cap > 64 and sum(size - cap - 40 for size in sizes if size > cap) < over:
        cap = max(cap - max(cap // 8, 16), 64)
    return cap


async def _summarize(
    prefix: Conversation, previous: Summary | None, ask: _Ask
) -> tuple[dict[str, str] | None, list[str]]:
    """The fields for ``prefix``, retried up to ``max_summary_attempts``. A span whose request
    would not fit ``ask.input_limit`` is summarized in pieces, each carrying the summary so far
    (a rolling summary); a model that answers a request with `ContextOverflowError` is asked
    again in pieces half the size."""
    if ask.summarizer is None:
        return None, ["no summarizer is attached"]
    errors: list[str] = []
    # Pieces are sized from this estimate; a model adapter's own framing of the request may
    # add a little, so the estimate keeps a margin below the limit.
    limit = int(ask.input_limit * SUMMARY_MARGIN)
    for attempt in range(1, ask.config.compaction.max_summary_attempts + 1):
        whole = _request(ask, prefix, previous, attempt, ask.kept)
        pieces = (
            [prefix]
            if summary_request_tokens(whole, ask.cache) <= limit
            else _chunks(ask, prefix, previous, limit)
        )
        running = previous
        try:
            fields: dict[str, str] = {}
            for index, piece in enumerate(pieces):
                last = index == len(pieces) - 1
                request = _request(ask, piece, running, attempt, ask.kept if last else ())
                fields = validate_summary(await ask.summarizer(request), ask.config)
                if not last:
                    text = render_summary(fields, ask.config)
                    running = Summary(fields=fields, text=text, task=ask.pinned_task or "")
            return fields, errors
        except ContextOverflowError as exc:
            errors.append(f"attempt {attempt}: the summary request was too long ({exc})")
            limit = max(limit // 2, MIN_SUMMARY_BUDGET * 4)
        except Exception as exc:
            errors.append(f"attempt {attempt}: {type(exc).__name__}: {exc}")
    return None, errors


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
    task = _pinned_task(result.conversation, summary, cache, limits)
    task_tokens = cache.text(TASK_HEADING + task + TASK_END) if task is not None else 0
    room = (
        limits.input_limit - limits.fixed_tokens - max(summary_tokens(summary, cache), task_tokens)
    )
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
    if task is not None:
        task, room = _fit_task(task, tail, limits, cache)
    # The summary may take the reserve (what the tail was sized by), never more than is left.
    budget = min(limits.reserve_tokens, max(room - cache.messages(tail) - 64, MIN_SUMMARY_BUDGET))
    ask = _Ask(
        config, summarizer, instructions, budget, cache, tail, task, limits.summary_limit(budget)
    )
    fields, errors = await _summarize(prefix, summary, ask)
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


def _pinned_task(
    conversation: Conversation, summary: Summary | None, cache: TokenCache, limits: ReductionLimits
) -> str | None:
    """The user's first message, kept verbatim beside every summary: carried from the standing
    summary, or read from the conversation at the first compaction — unless it is too large
    (`PINNED_TASK_SHARE` of the input limit), when the summary states the task instead."""
    if summary is not None:
        return summary.task or None
    first = conversation[0] if conversation else None
    if not isinstance(first, UserMessage) or first.tool_results:
        return None
    text = "\n".join(b.text for b in first.content if isinstance(b, TextBlock)).strip()
    if not text or cache.text(text) > limits.input_limit * PINNED_TASK_SHARE:
        return None
    return text


def _fit_task(
    task: str, tail: Conversation, limits: ReductionLimits, cache: TokenCache
) -> tuple[str | None, int]:
    """The pinned task beside this tail, and the room left for summary and tail. A latest turn
    too large to leave the task its room cuts it at a line end to what is left (the summary's
    smallest budget kept free), or unpins it."""
    left = limits.input_limit - limits.fixed_tokens - cache.messages(tail) - MIN_SUMMARY_BUDGET
    fitted = _cut_task(task, left - 64, cache)
    tokens = cache.text(TASK_HEADING + fitted + TASK_END) if fitted is not None else 0
    return fitted, limits.input_limit - limits.fixed_tokens - tokens


def _cut_task(task: str, room: int, cache: TokenCache) -> str | None:
    """``task`` whole when it fits ``room`` tokens, else its first lines that do (with a note
    saying how many were left out); None when not even a few lines fit."""
    if cache.text(TASK_HEADING + task + TASK_END) <= room:
        return task
    lines = task.splitlines()
    kept: list[str] = []
    used = cache.text(TASK_HEADING + TASK_END) + 24
    for line in lines:
        used += cache.text(line) + 1
        if used > room:
            break
        kept.append(line)
    if len(kept) < 3:
        return None
    return "\n".join(kept) + f"\n[the first message continues for {len(lines) - len(kept)} lines]"


def _fit_latest_turn(
    tail: Conversation, room: int, cache: TokenCache
) -> tuple[Conversation, list[Transform]]:
    """The kept tail cut to ``room`` tokens: when the latest turn alone is too big, its tool
    results share what is left (never the calls: pairs stay whole)."""
    if cache.messages(tail) <= room:
        return tail, []
    results = sum(len(m.tool_results) for m in tail if isinstance(m, UserMessage))
    other = sum(cache.message(m) for m in tail if not isinstance(m, UserMessage)) + 64
    per_result = max((room - other) // max(results, 1), 64)
    return truncate_results(tail, per_result, None, cache)


def summary_text(rendered: str, task: str | None) -> str:
    """What the model sees of a summary: the summary, then the pinned task (when there is one)."""
    return f"{rendered}\n\n{TASK_HEADING}{task}{TASK_END}" if task else rendered


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
