"""What one config's replay sends, as the shapes the cost model prices: every request, and
before a compaction's request the summary calls that compaction made.

A summary call is priced from the request the agent would send (`ctxlab.models.summary_call`,
the function the agent sends with): the cached form — the last request again, then what arrived
since and the instruction — when it fits the call's limit, else the span alone; its answer is
the JSON the summarizer returned. A call that fits neither way is never sent and costs nothing
(the pipeline summarizes the span in smaller pieces instead).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ctxlab.analysis._cost import RequestShape, shape_of
from ctxlab.analysis._replay import ReplayStep
from ctxlab.manifest import ContextManifest
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.tokens import TokenCache

__all__ = ["SentSummary", "priced_shapes"]


@dataclass(frozen=True)
class SentSummary:
    """A summary call a replay would send: its manifest and the summarizer's answer."""

    manifest: ContextManifest
    answer: Mapping[str, Any]


def priced_shapes(
    steps: Sequence[ReplayStep],
    summary_calls: Mapping[int, Sequence[SentSummary]],
    messages: Sequence[UserMessage | AssistantMessage],
    cache: TokenCache,
    times: Mapping[int, float] | None = None,
    write_ttl: Literal["5m", "1h"] | None = None,
) -> Iterator[RequestShape]:
    """The shapes of ``steps`` in order, each compaction's summary calls (``summary_calls``
    by step position; empty when summary calls are not priced) before its request. A request's
    output is the recorded reply it answered (``messages[step.index]``), and its time the
    reply's (``times``, by message index: `RecordingClock.times`; a summary call at its step's
    time) — the recording's gaps, think time and tool time, replayed as recorded; its writes
    at ``write_ttl`` (the recording's, `recorded_ttl`; None: the cache rules' own).

    Yielded one at a time: the cost model needs each shape once, and all of a long session's
    shapes at once held every request's parts (memory growing with the square of the steps)."""
    keys: dict[int, str] = {}  # one key string per item, shared by the requests that hold it
    times = times or {}
    for position, step in enumerate(steps):
        at = times.get(step.index)
        for call in summary_calls.get(position, ()):
            output = cache.text(json.dumps(call.answer, ensure_ascii=False))
            yield _timed(shape_of(call.manifest, output, keys), at, write_ttl)
        shape = shape_of(step.manifest, cache.message(messages[step.index]), keys)
        yield _timed(shape, at, write_ttl)


def _timed(
    shape: RequestShape, at: float | None, write_ttl: Literal["5m", "1h"] | None
) -> RequestShape:
    if at is None and write_ttl is None:
        return shape
    return dataclasses.replace(shape, at=at, write_ttl=write_ttl)
