"""Offline summaries kept by what they summarize (`SummaryMemo`): a what-if replays the same
recording under config after config, and a compaction asked again with the same span, the same
summary before it and the same config fields writes the same extract — taken, not written
again, whatever the request's number (a slider move shifts the numbers, not what is summarized).

The key is everything `ctxlab.pipeline.extractive_summarizer` reads of its request, and what a
config sets in it: each message of the span (by content), the summary it carries forward, the
prompt, schema and template, the caller's instructions, the attempt, the budget in tokens, the
pinned task, the input limit and the kept tail (by content). The token counter is the what-if's
own (one per memo). Never for a model's summaries: those are calls, metered and priced.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ctxlab.messages import Summary
from ctxlab.pipeline import SummaryRequest

__all__ = ["SummaryMemo", "summary_key"]

Writer = Callable[[SummaryRequest], Awaitable[Mapping[str, Any]]]


def summary_key(request: SummaryRequest) -> tuple[Any, ...]:
    """What the offline summary of ``request`` depends on, as a key."""
    previous = request.previous_summary
    return (
        tuple(m.content_hash for m in request.messages),
        None if previous is None else _fields(previous),
        request.prompt,
        json.dumps(request.schema, sort_keys=True, default=repr),
        request.template,
        request.instructions,
        request.attempt,
        request.budget_tokens,
        request.pinned_task,
        request.input_limit,
        tuple(m.content_hash for m in request.kept),
    )


def _fields(summary: Summary) -> tuple[Any, ...]:
    # Every field of the summary (a frozen model that forbids others), read, not serialized
    # to JSON at every summary call; its cached properties (its message) are left out.
    return tuple(
        tuple(value.items()) if isinstance(value, dict) else value
        for value in (getattr(summary, name) for name in type(summary).model_fields)
    )


class SummaryMemo:
    """Offline summary answers by `summary_key`; past ``limit`` of them, cleared whole (memory
    stays flat however long the user moves sliders)."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._answers: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.written = 0
        """How many summaries were written (not found kept)."""
        self.taken = 0
        """How many were found kept."""

    async def answer(self, request: SummaryRequest, write: Writer) -> dict[str, Any]:
        """The summary of ``request``: kept, or written by ``write`` and kept (a copy each
        time: the caller may change what it gets)."""
        key = summary_key(request)
        kept = self._answers.get(key)
        if kept is not None:
            self.taken += 1
            return dict(kept)
        answer = dict(await write(request))
        self.written += 1
        if len(self._answers) >= self.limit:
            self._answers.clear()
        self._answers[key] = answer
        return dict(answer)
