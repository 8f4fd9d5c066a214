"""The policies a what-if compares configs against, priced with the same cache model:

- **drop the oldest turns to fit** (the baseline): no summary; the first user message kept, the
  oldest turns dropped whole — a call never without its result, a dropped turn never brought
  back — until the request fits the input limit; a latest turn too large alone has its results
  cut to what is left, as a harness without compaction must;
- **never compact**: the whole session at every step, as if the window were unlimited (the
  requests over the limit are counted: a provider would reject them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ctxlab.analysis._cost import Prefix, Price, RequestCost, RequestShape
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.io._transcript import Transcript
from ctxlab.materials import SystemPart, Unrecorded
from ctxlab.messages import AssistantMessage, UserMessage, request_start
from ctxlab.pipeline._stages import fixed_part, unrecorded_item
from ctxlab.tokens import TokenCache

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Fixed",
    "ReferenceShapes",
    "References",
    "fixed_parts",
    "output_cost",
    "reference_shapes",
    "references_frame",
]

Message = UserMessage | AssistantMessage


@dataclass(frozen=True)
class ReferenceShapes:
    """A reference policy's requests, and how many passed (or had to be cut to) the limit."""

    shapes: list[RequestShape]
    over_limit: int
    replies: list[int] = field(default_factory=list)
    """The message index of the reply each request produced."""
    totals: list[int] = field(default_factory=list)
    """Each request's tokens (never compacting: kept as it goes, not summed again)."""


@dataclass(frozen=True)
class References:
    """A reference policy's priced requests, and how many passed (or had to be cut to) the
    limit."""

    costs: list[RequestCost]
    over_limit: int


def references_frame(
    references: tuple[References, References], price: Price, pricing: str
) -> pd.DataFrame:
    """`WhatIf.references`: the two references, one row each — requests, ``over_limit``,
    input, output and all-in cost (USD) — with ``attrs["pricing"]``."""
    import pandas as pd

    rows = []
    names = ("baseline (drop oldest turns to fit)", "no compaction (unlimited window)")
    for name, reference in zip(names, references, strict=True):
        output = output_cost(reference.costs, price)
        total = sum(c.cost for c in reference.costs)
        rows.append(
            {
                "reference": name,
                "requests": len(reference.costs),
                "over_limit": reference.over_limit,
                "input_cost": total - output,
                "output_cost": output,
                "cost": total,
            }
        )
    frame = pd.DataFrame(rows).set_index("reference")
    frame.attrs["pricing"] = pricing
    return frame


def output_cost(costs: Sequence[RequestCost], price: Price) -> float:
    """What the answers of ``costs`` cost (USD): each at the output price of its request's
    size (a long-context request's answer at the tier's price)."""
    return sum(c.output * price.at(c.input_tokens).output for c in costs) / 1e6


Fixed = tuple[tuple[str, ...], tuple[int, ...]]
"""The parts every request repeats, as (keys, tokens)."""


def reference_shapes(
    messages: Sequence[Message],
    cache: TokenCache,
    fixed: Fixed | Callable[[int], Fixed],
    input_limit: int,
    limit: int | None,
    times: Mapping[int, float] | None = None,
    write_ttl: Literal["5m", "1h"] | None = None,
) -> ReferenceShapes:
    """The requests of a reference policy over ``messages``: ``fixed`` are the tool and System
    parts (keys, tokens) every request repeats — or a function giving, for the message index of
    the reply a request produced, that request's own (a recording's unrecorded part changes
    with its model); ``limit`` None never compacts (and counts the requests over
    ``input_limit``), else the oldest turns are dropped to fit ``limit``. Each request is
    sent at its reply's time (``times``, by message index: the recording's clock) and writes
    at ``write_ttl``, as `priced_shapes` prices a config's."""
    shaped = _reference_shapes(messages, cache, fixed, input_limit, limit)
    if not times and write_ttl is None:
        return shaped
    timed = [
        dataclasses.replace(shape, at=(times or {}).get(reply), write_ttl=write_ttl)
        for shape, reply in zip(shaped.shapes, shaped.replies, strict=True)
    ]
    return dataclasses.replace(shaped, shapes=timed)


def _reference_shapes(
    messages: Sequence[Message],
    cache: TokenCache,
    fixed: Fixed | Callable[[int], Fixed],
    input_limit: int,
    limit: int | None,
) -> ReferenceShapes:
    fixed_of = fixed if callable(fixed) else _always(fixed)
    start = request_start(messages)
    shapes: list[RequestShape] = []
    over = 0
    if start == len(messages):
        return ReferenceShapes(shapes, over)
    keys = [m.content_hash for m in messages]
    tokens = [cache.message(m) for m in messages]
    blocks = [len(m.content) or 1 for m in messages]
    if limit is None:
        return _never_compacting(messages, keys, tokens, blocks, start, fixed_of, input_limit)
    first = 0  # index, after the pinned first message, of the first message sent
    replies: list[int] = []
    for index in range(start + 1, len(messages)):
        if not isinstance(messages[index], AssistantMessage):
            continue
        fixed_keys, fixed_tokens = fixed_of(index)
        base = sum(fixed_tokens)
        cut: tuple[int, ...] = ()
        fitted = fit_from(messages, tokens, start, index, first, limit - base)
        if fitted < 0:
            # Even the latest turn alone does not fit: its results are cut to what is
            # left, and the request counted.
            over += 1
            fitted = latest_turn(messages, start, index)
            cut = (max(limit - base - tokens[start] - tokens[fitted], 0),)
            sent: Sequence[int] = [fitted]
        else:
            sent = range(max(fitted, start + 1), index)
        first = fitted
        parts_keys = (*fixed_keys, keys[start], *(keys[i] for i in sent))
        parts_keys += tuple(f"cut/{index}" for _ in cut)
        parts_tokens = (*fixed_tokens, tokens[start], *(tokens[i] for i in sent), *cut)
        parts_blocks = (*(1 for _ in fixed_keys), blocks[start], *(blocks[i] for i in sent))
        parts_blocks += tuple(1 for _ in cut)
        points = (len(fixed_keys) - 1, len(parts_keys) - 1)
        shapes.append(
            RequestShape(parts_keys, parts_tokens, points, tokens[index], blocks=parts_blocks)
        )
        replies.append(index)
    return ReferenceShapes(shapes, over, replies)


def _always(fixed: Fixed) -> Callable[[int], Fixed]:
    def of(reply: int) -> Fixed:
        return fixed

    return of


def _never_compacting(
    messages: Sequence[Message],
    keys: Sequence[str],
    tokens: Sequence[int],
    blocks: Sequence[int],
    start: int,
    fixed_of: Callable[[int], Fixed],
    input_limit: int,
) -> ReferenceShapes:
    """The whole session at every request: each request the one before plus what followed,
    so all are `Prefix` views of one sequence per fixed part (memory and hashing linear in the
    requests, times the fixed parts: one, or one per model of a recording)."""
    sequences: dict[Fixed, tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]] = {}
    shapes: list[RequestShape] = []
    replies: list[int] = []
    totals: list[int] = []
    over = 0
    sent = tokens[start]  # the pinned first message and what followed (fixed parts apart)
    for index in range(start + 1, len(messages)):
        if isinstance(messages[index], AssistantMessage):
            fixed = fixed_of(index)
            fixed_keys, fixed_tokens = fixed
            if fixed not in sequences:
                sequences[fixed] = (
                    (*fixed_keys, keys[start], *keys[start + 1 :]),
                    (*fixed_tokens, tokens[start], *tokens[start + 1 :]),
                    (*(1 for _ in fixed_keys), blocks[start], *blocks[start + 1 :]),
                )
            all_keys, all_tokens, all_blocks = sequences[fixed]
            replies.append(index)
            totals.append(sum(fixed_tokens) + sent)
            over += totals[-1] > input_limit
            end = len(fixed_keys) + 1 + index - start - 1
            points = (len(fixed_keys) - 1, end - 1)
            shapes.append(
                RequestShape(
                    Prefix(all_keys, end),
                    Prefix(all_tokens, end),
                    points,
                    tokens[index],
                    blocks=Prefix(all_blocks, end),
                )
            )
        sent += tokens[index]
    return ReferenceShapes(shapes, over, replies, totals)


def latest_turn(messages: Sequence[Message], pinned: int, end: int) -> int:
    """The index of the last assistant message before ``end`` (after ``pinned``), where the
    latest turn starts; ``pinned + 1`` when there is none."""
    return next(
        (i for i in range(end - 1, pinned, -1) if isinstance(messages[i], AssistantMessage)),
        pinned + 1,
    )


def fit_from(
    messages: Sequence[Message],
    tokens: Sequence[int],
    pinned: int,
    end: int,
    first: int,
    room: int,
) -> int:
    """The first message index (after ``pinned``, never before ``first``: a dropped turn stays
    dropped) from which ``messages[first:end]`` plus the pinned one fit ``room``, starting at an
    assistant turn so that no result is sent without its call; -1 when even the latest turn
    alone does not fit."""
    first = max(first, pinned + 1)
    # The latest turn (the last call and its results) is what the request answers: never dropped.
    latest = max(latest_turn(messages, pinned, end), first)
    used = tokens[pinned] + sum(tokens[first:end])
    while used > room and first < latest:
        used -= tokens[first]
        first += 1
        while first < latest and not isinstance(messages[first], AssistantMessage):
            used -= tokens[first]
            first += 1
    return first if used <= room else -1


def fixed_parts(
    transcript: Transcript, cache: TokenCache, part: UnrecordedPart | None
) -> Callable[[int], Fixed]:
    """What each request of the references repeats, by the reply it produced — the unrecorded
    part (its model's), tool schemas and System, in the provider's order — as (keys, tokens)."""
    system = (SystemPart("system_prompt", transcript.system),) if transcript.system else ()
    recorded = fixed_part(system, tuple(transcript.tools), cache)
    rest = (*recorded.tool_items, *recorded.system_items)
    known: dict[Unrecorded | None, Fixed] = {}

    def of(reply: int) -> Fixed:
        unseen = part.at(reply) if part is not None else None
        if unseen not in known:
            items = (*((unrecorded_item(unseen),) if unseen else ()), *rest)
            keys = tuple(f"{i.id}#{i.content_hash}" for i in items)
            known[unseen] = (keys, tuple(i.tokens for i in items))
        return known[unseen]

    return of
