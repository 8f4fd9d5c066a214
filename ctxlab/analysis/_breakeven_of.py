"""Where a run's compactions fall among its priced requests, and their break-evens
(`ctxlab.analysis._breakeven`): a what-if's replay (`ConfigRun`: each step's compaction), the
requests an agent sent (its manifests: a live session, a fork's run) and a recording's own
compactions (the ``recorded_compaction`` transform on the first request after each) — with the
table a what-if shows, one row per compaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._breakeven import BreakEven, CompactionAt, break_evens
from ctxlab.analysis._cache_clock import manifest_times
from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._price import Price
from ctxlab.manifest import ContextManifest, asked_by
from ctxlab.manifest._kinds import OWN_COMPACTION_METHODS as METHODS

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.analysis._config_run import ConfigRun
    from ctxlab.pipeline import CompactionRecord

__all__ = [
    "BREAK_EVEN_COLUMNS",
    "break_even_frame",
    "break_even_row",
    "manifest_break_evens",
    "paid_back_count",
    "run_break_evens",
]

TRIGGERS = {"reasoning": "automatic", "recovery": "overflow"}
"""What made a compaction, by the purpose of the preparation it was made in (any other — a
``compaction`` preparation — was requested: "Compact now", the CompressContext tool)."""
REASONING = ("reasoning", "recovery")
SENT = (*REASONING, "summary")
"""The purposes of requests a model is sent (a ``compaction`` preparation sends nothing of
its own: its summary calls are ``summary`` requests)."""

BREAK_EVEN_COLUMNS = (
    "config",
    "request",
    "compaction",
    "removed",
    "rewritten",
    "summary_cost",
    "rewrite_cost",
    "cost",
    "saving",
    "later",
    "saved",
    "paid_back_at",
    "gap_seconds",
    "cold",
    "until",
    "break_even",
)
"""The columns of `WhatIf.compactions`, one row per compaction (`BreakEven`'s fields)."""


def run_break_evens(run: ConfigRun) -> list[BreakEven]:
    """The break-even of each of a replay's compactions, its requests timed as they are priced
    (by the recording's time of the reply each stands for), its cache living as long as its
    rules say (`CacheRules.lifetime`)."""
    pricing = run._pricing
    costs = run.costs
    if pricing is None or not costs:
        return []
    positions = [n for n, c in enumerate(costs) if c.purpose != "summary"]
    compactions = [
        CompactionAt(
            positions[number],
            step.compaction.tokens_before - step.compaction.tokens_after,
            f"{_trigger(step.compaction)} {step.compaction.method}",
        )
        for number, step in enumerate(run.prepared)
        if step.compaction is not None and number < len(positions)
    ]
    at = [pricing.times.get(step.index) for step in run.prepared]
    rules = pricing.rules
    return break_evens(costs, compactions, pricing.price, rules, at, rules.lifetime)


def _trigger(record: CompactionRecord) -> str:
    """What started a replay's compaction: a rule of the config's on demand (its record says
    which), else the trigger line."""
    return "on_demand" if record.asked is not None else "automatic"


def manifest_break_evens(
    manifests: Sequence[ContextManifest],
    price: Price,
    rules: CacheRules,
    *,
    before: Sequence[ContextManifest] = (),
    times: Mapping[str, float] | None = None,
) -> list[BreakEven]:
    """The break-even of each compaction among the requests an agent sent (``manifests``, in
    order; ``before``: the requests before them, whose cache the first reads — a fork's origin):
    ctxlab's, by their transforms (in a reasoning request: that request; in a ``compaction``
    preparation: the next reasoning request), each timed as `costs_of_manifests` times it (its
    ``sent_at``, else ``times`` by request id; a run after ``before`` joined to it with no
    gap), its cache living as long as ``rules`` say (`CacheRules.lifetime`)."""
    sent = [m for m in before if m.purpose in SENT]
    first = len(sent)
    compactions: list[CompactionAt] = []
    waiting: list[CompactionAt] = []  # made between requests: on the next reasoning request
    for manifest in manifests:
        trigger = TRIGGERS.get(manifest.purpose, "requested")
        found = [
            # An on-demand rule's compaction says so in its transform (`asked_by`).
            CompactionAt(
                len(sent),
                t.tokens_before - t.tokens_after,
                f"{'on_demand' if asked_by(t) else trigger} {METHODS[t.kind]}",
            )
            for t in manifest.transforms
            if t.kind in METHODS and t.tokens_before is not None and t.tokens_after is not None
        ]
        if manifest.purpose in REASONING:
            compactions.extend(CompactionAt(len(sent), c.removed, c.label) for c in waiting)
            compactions.extend(found)
            waiting = []
        elif manifest.purpose == "compaction":
            waiting.extend(found)
        if manifest.purpose in SENT:
            sent.append(manifest)
    joined = first or None
    costs = costs_of_manifests(sent, price, rules, times=times, joined=joined)
    clock = manifest_times(sent, times or {}, joined)
    at = [t for m, t in zip(sent, clock, strict=True) if m.purpose in REASONING]
    evens = break_evens(costs, compactions, price, rules, at, rules.lifetime)
    numbers = sum(m.purpose in REASONING for m in sent[:first])
    return [e for e in evens if e.request >= numbers]


def paid_back_count(evens: Sequence[BreakEven]) -> str | None:
    """``"2 of 3"``: how many compactions paid back (None without one)."""
    if not evens:
        return None
    return f"{sum(e.paid_back for e in evens)} of {len(evens)}"


def break_even_frame(evens: Iterable[tuple[str, BreakEven]]) -> pd.DataFrame:
    """One row per (config, compaction): `BREAK_EVEN_COLUMNS`."""
    import pandas as pd

    rows = [{"config": name, **break_even_row(e)} for name, e in evens]
    frame = pd.DataFrame(rows, columns=list(BREAK_EVEN_COLUMNS))
    return frame.astype({"paid_back_at": "Int64", "until": "Int64"})


def break_even_row(even: BreakEven) -> dict[str, Any]:
    """A compaction's break-even as a table's row (`BREAK_EVEN_COLUMNS` after ``config``)."""
    return {
        "request": even.request,
        "compaction": even.label,
        "removed": even.removed,
        "rewritten": even.rewritten,
        "summary_cost": even.summary_cost,
        "rewrite_cost": even.rewrite_cost,
        "cost": even.cost,
        "saving": even.saving,
        "later": even.later,
        "saved": even.saved,
        "paid_back_at": even.paid_back_at,
        "gap_seconds": even.gap,
        "cold": even.cold,
        "until": even.until,
        "break_even": even.sentence,
    }
