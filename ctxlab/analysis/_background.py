"""Summaries written in the background: a compaction asked at one request while the session
goes on, swapped in when the summary is ready. Measured on a replay's compactions and the
recording's clock: for each, the request it is swapped in at — the first one sent at least
``seconds`` after the request that asked — and how stale the summary is there: the requests
sent meanwhile, and the input they added (what the summary does not cover and the request
still carries after it). The summary call costs what it costs in the replay; the requests
sent meanwhile are sent whole, as without a compaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.analysis._replay import ReplayStep

__all__ = ["Staleness", "background_staleness"]


@dataclass(frozen=True)
class Staleness:
    """One compaction written in the background."""

    asked: int
    """The request (number) whose compaction was asked for."""
    swapped: int | None
    """The request it is swapped in at (None: the session ended first)."""
    requests_behind: int | None
    """Requests sent while it was written (``swapped − asked``)."""
    tokens_behind: int | None
    """Input the session added meanwhile: the swap request's input before compaction less the
    asking request's (the tokens the summary does not cover)."""


def background_staleness(
    steps: Sequence[ReplayStep],
    baseline: Sequence[ReplayStep],
    times: Mapping[int, float],
    seconds: float,
) -> list[Staleness]:
    """For each compaction of ``steps`` (a replay from the start), where a summary written in ``seconds`` would
    be swapped in on the recording's clock (``times``: by reply index) and how stale it is,
    sized on ``baseline`` (a replay of the same messages that never compacts: the input each
    request would carry without the summary). A request without a time never swaps a summary
    in."""
    sizes = {s.index: s.manifest.estimated_input_tokens for s in baseline}
    out: list[Staleness] = []
    for step in steps:
        if step.compaction is None:
            continue
        start = times.get(step.index)
        swap = None
        if start is not None:
            swap = next(
                (
                    later
                    for later in steps[step.number + 1 :]
                    if (at := times.get(later.index)) is not None and at - start >= seconds
                ),
                None,
            )
        if swap is None:
            out.append(Staleness(step.number, None, None, None))
            continue
        behind = sizes.get(swap.index, 0) - sizes.get(step.index, 0)
        out.append(Staleness(step.number, swap.number, swap.number - step.number, behind))
    return out
