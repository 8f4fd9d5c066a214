"""Summary calls: the requests a compaction sends its summarizer, each within its limit.

A span whose request would not fit is summarized in pieces — a turn at a time, a rolling
summary carried from piece to piece — and a turn too large alone is cut for its request only
(results first, then its text or tool input); a model that answers ``ContextOverflowError`` is
asked again in pieces half the size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import ContextOverflowError
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.messages._state import Summary
from ctxlab.pipeline._results import truncate_results
from ctxlab.pipeline._summary import (
    Summarizer,
    SummaryRequest,
    instruction_tokens,
    render_summary,
    validate_summary,
)
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache

__all__ = [
    "MIN_SUMMARY_BUDGET",
    "SUMMARY_MARGIN",
    "SummaryAsk",
    "is_boundary",
    "summarize",
    "summary_request_tokens",
    "summary_tokens",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]

MIN_SUMMARY_BUDGET = 256
"""The smallest budget a summary is given, however full the window."""

SUMMARY_MARGIN = 0.97
"""The share of a summary request's limit its pieces are sized to (the rest absorbs how a
model adapter frames the request)."""


def summary_tokens(summary: Summary | None, cache: TokenCache) -> int:
    """Tokens of the summary message."""
    return 0 if summary is None else cache.text(summary.text) + MESSAGE_OVERHEAD


def is_boundary(message: UserMessage | AssistantMessage) -> bool:
    # A kept tail may start at an assistant turn or at a user turn that answers no call.
    return isinstance(message, AssistantMessage) or not message.tool_results


@dataclass(frozen=True)
class SummaryAsk:
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
    ask: SummaryAsk,
    messages: Conversation,
    previous: Summary | None,
    attempt: int,
    kept: Conversation,
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
    ask: SummaryAsk, prefix: Conversation, previous: Summary | None, limit: int
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
            while after < len(prefix) and not is_boundary(prefix[after]):
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
    whole = cache.text(strings[key])
    rest = cache.block(block) - whole
    # The argument's count is known: the cut does not tokenize it again.
    head = cache.head(strings[key], max(keep - rest, 16), whole)
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
            # A text block's count is its text's (no framing): not tokenized again.
            head = cache.head(block.text, keep, size)
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


async def summarize(
    prefix: Conversation, previous: Summary | None, ask: SummaryAsk
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
