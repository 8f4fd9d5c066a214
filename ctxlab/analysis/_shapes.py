"""What one config's replay sends, as the shapes the cost model prices: every request, and
before a compaction's request the summary calls that compaction made.

A summary call is priced from the request the agent would send (`ctxlab.models.summary_call`,
the function the agent sends with): the cached form — the last request again, then what arrived
since and the instruction — when it fits the call's limit, else the span alone; its answer is
the JSON the summarizer returned. A call that fits neither way is never sent and costs nothing
(the pipeline summarizes the span in smaller pieces instead).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
) -> Iterator[RequestShape]:
    """The shapes of ``steps`` in order, each compaction's summary calls (``summary_calls``
    by step position; empty when summary calls are not priced) before its request. A request's
    output is the recorded reply it answered (``messages[step.index]``).

    Yielded one at a time: the cost model needs each shape once, and all of a long session's
    shapes at once held every request's parts (memory growing with the square of the steps)."""
    keys: dict[int, str] = {}  # one key string per item, shared by the requests that hold it
    for position, step in enumerate(steps):
        for call in summary_calls.get(position, ()):
            output = cache.text(json.dumps(call.answer, ensure_ascii=False))
            yield shape_of(call.manifest, output, keys)
        yield shape_of(step.manifest, cache.message(messages[step.index]), keys)
