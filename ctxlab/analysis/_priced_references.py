"""A what-if's two references priced (`ctxlab.analysis._references` shapes their requests):
the feasible baseline and never compacting, each request timed by the recording's clock and
priced with the same cache model as the configs' — and the requests never compacting sends
over the input limit counted by the bill's measure too, where the recording has usage
(`ctxlab.analysis._billed`). Kept apart from `WhatIf` so that it stays about the configs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from ctxlab.analysis._billed import Bill
from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._cost import CacheRules, Price, request_costs
from ctxlab.analysis._references import References, fixed_parts, reference_shapes
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.config._config import require_config
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import Thresholds
from ctxlab.tokens import TokenCache

__all__ = ["priced_references", "reference_limit"]


def priced_references(
    transcript: Transcript,
    cache: TokenCache,
    unrecorded: UnrecordedPart | None,
    limit: int,
    *,
    times: Mapping[int, float] | None,
    write_ttl: Literal["5m", "1h"] | None,
    bill: Bill,
    price: Price,
    rules: CacheRules | None,
) -> tuple[References, References]:
    """The baseline and never compacting of ``transcript`` at input ``limit``, priced at
    ``price`` under ``rules``: every request carries the ``unrecorded`` part, is sent at its
    reply's time (``times``) and writes at ``write_ttl``; never compacting's ``over_limit``
    also counts the requests ``bill`` says passed the limit."""
    fixed_of = fixed_parts(transcript, cache, unrecorded)
    messages = transcript.messages
    feasible, unlimited = (
        reference_shapes(messages, cache, fixed_of, limit, cap, times, write_ttl)
        for cap in (limit, None)
    )
    over = unlimited.over_limit
    if bill:
        # Over by the bill's measure too: the whole session holds every recorded request.
        unseen = unrecorded.size if unrecorded is not None else (lambda _: 0)
        over = sum(
            total > limit or bill.over(total, unseen(reply), reply, limit)
            for total, reply in zip(unlimited.totals, unlimited.replies, strict=True)
        )
    return (
        References(request_costs(feasible.shapes, price, rules), feasible.over_limit),
        References(request_costs(unlimited.shapes, price, rules), over),
    )


def reference_limit(runs: Iterable[ConfigRun], context_window: int) -> int:
    """The input limit the references fit: the first prepared request's, else (every config
    failed at its first request: the unrecorded part alone, say) the first config's at
    ``context_window``."""
    runs = list(runs)
    run = next((r for r in runs if r.prepared), None)
    if run is not None:
        return run.prepared[0].manifest.input_limit
    config = require_config(runs[0].config)
    return Thresholds.compute(config, context_window).input_limit
