"""What one config's replay sends, as the shapes the cost model prices: every request, and
before a compaction's request the summary calls that compaction made.

A summary call is priced from the request the pipeline built (its last attempt's): the real
instruction, with the earlier summary it re-sends, and the JSON answer. It is sent in the cached
form — the last request again, then what arrived since — when that fits the request's limit, as
the agent does; otherwise the span alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ctxlab.analysis._cost import RequestShape, shape_of
from ctxlab.analysis._replay import ReplayStep
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import SummaryRequest
from ctxlab.pipeline._summary import instruction_tokens
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache

__all__ = ["priced_shapes", "summary_call_shapes"]

Asked = Sequence[tuple[SummaryRequest, dict[str, Any]]]


def priced_shapes(
    steps: Sequence[ReplayStep],
    summary_requests: Mapping[int, Asked],
    messages: Sequence[UserMessage | AssistantMessage],
    cache: TokenCache,
) -> Iterator[RequestShape]:
    """The shapes of ``steps`` in order, each compaction's summary calls (``summary_requests``
    by step position; empty when summary calls are not priced) before its request. A request's
    output is the recorded reply it answered (``messages[step.index]``).

    Yielded one at a time: the cost model needs each shape once, and all of a long session's
    shapes at once held every request's parts (memory growing with the square of the steps)."""
    previous: RequestShape | None = None
    keys: dict[int, str] = {}  # one key string per item, shared by the requests that hold it
    for position, step in enumerate(steps):
        if step.compaction is not None:
            asked = summary_requests.get(position, [])
            yield from summary_call_shapes(step, asked, previous, cache)
        previous = shape_of(step.manifest, cache.message(messages[step.index]), keys)
        yield previous


def summary_call_shapes(
    step: ReplayStep, asked: Asked, previous: RequestShape | None, cache: TokenCache
) -> list[RequestShape]:
    """The summary calls of the compaction before ``step`` (``asked``: the requests and
    answers of every attempt), after the request ``previous``."""
    if not asked:
        return []
    attempt = max(r.attempt for r, _ in asked)
    calls = [(r, a) for r, a in asked if r.attempt == attempt]
    key = step.manifest.request_id
    shapes: list[RequestShape] = []
    for n, (request, answer) in enumerate(calls):
        instruction = instruction_tokens(request, cache.text) + MESSAGE_OVERHEAD
        output = cache.text(json.dumps(answer, ensure_ascii=False))
        limit = request.input_limit or step.manifest.input_limit
        span = cache.messages(request.messages)
        if len(calls) == 1 and previous is not None and previous.breakpoints:
            end = previous.breakpoints[-1] + 1
            sent = sum(previous.tokens[previous.fixed : end])
            record = step.compaction
            before = record.tokens_before if record is not None else 0
            old = request.previous_summary
            carried = cache.text(old.text) + MESSAGE_OVERHEAD if old is not None else 0
            new = max(before - carried - sent, 0) + instruction
            if sum(previous.tokens[:end]) + new <= limit:
                keys = (*previous.keys[:end], f"summary-new/{key}")
                tokens = (*previous.tokens[:end], new)
                points = (*previous.breakpoints, len(keys) - 1)
                return [RequestShape(keys, tokens, points, output, "summary")]
        keys = (f"summary/{key}/{n}",)
        shapes.append(RequestShape(keys, (span + instruction,), (0,), output, "summary"))
    return shapes
