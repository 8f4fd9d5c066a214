"""A plain sentence beside a what-if's table and a sweep's frame: does any config cost less than
the feasible baseline (no summary, the oldest turns dropped to fit) at this window? At small
windows often none does — each compaction's summary call and the rewritten cache cost more
than the turns it saves — and a table of ratios above 1 says so only to a reader who looks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ctxlab.analysis._cost import CacheRules, Price, cache_rules_for, price_for, pricing_note
from ctxlab.analysis._prices import recorded_model, recorded_on
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.io._transcript import Transcript

__all__ = ["BASELINE", "baseline_verdict", "say_pricing", "sweep_findings"]

BASELINE = "the feasible baseline (no summary, the oldest turns dropped to fit)"


def baseline_verdict(
    window: int, costs: Mapping[str, float], baseline: float, *, sessions: int | None = None
) -> str:
    """Whether any of ``costs`` (config → USD) is below ``baseline`` (USD) at ``window``;
    ``sessions``: how many sessions the sums are over (a sweep's)."""
    where = f"With the window at {window:,} tokens"
    if sessions is not None:
        where += f", over {sessions} session{'s' if sessions != 1 else ''}"
    priced = {name: cost for name, cost in costs.items() if math.isfinite(cost)}
    if not priced:
        return f"{where}, no config ran to the end: nothing to compare with {BASELINE}."
    if not baseline > 0:
        return (
            f"{where}, {BASELINE} costs nothing ($0: a price of $0, or no request to price): no "
            "config can cost less, and cost_vs_baseline is NaN — no ratio to a cost of nothing; "
            "compare the configs by tokens_sent."
        )
    cheapest = min(priced, key=priced.__getitem__)
    ratio = priced[cheapest] / baseline
    below = sorted(name for name, cost in priced.items() if cost < baseline)
    if not below:
        if math.isclose(priced[cheapest], baseline, rel_tol=1e-9):
            return (
                f"{where}, no config costs less than {BASELINE}: the cheapest, {cheapest!r}, "
                f"costs the same (${baseline:,.2f})."
            )
        dearest = max(priced.values()) / baseline
        low, high = f"{ratio:.2f}", f"{dearest:.2f}"
        spread = f"{low}×" if low == high else f"{low}–{high}×"
        return (
            f"{where}, no config costs less than {BASELINE}: they cost {spread} as much (the "
            f"cheapest, {cheapest!r}, ${priced[cheapest]:,.2f} against ${baseline:,.2f})."
        )
    return (
        f"{where}, {len(below)} of {len(priced)} configs cost less than {BASELINE}; the "
        f"cheapest, {cheapest!r}, {ratio:.2f}× its cost (${priced[cheapest]:,.2f} against "
        f"${baseline:,.2f})."
    )


def sweep_findings(frame: pd.DataFrame) -> list[str]:
    """One `baseline_verdict` per window of a sweep's frame: each config's cost summed over the
    sessions that every config of that window ran without error, against the baseline's."""
    if not hasattr(frame, "columns") or isinstance(frame, type):
        msg = f"sweep_findings reads the frame ctxlab.sweep returns, got {shown(frame)}"
        raise UsageError(msg)
    findings: list[str] = []
    if frame.empty or "cost_vs_baseline" not in frame:
        return findings
    ok = frame[frame["error"].isna()] if "error" in frame else frame
    for window in sorted(frame["window"].dropna().unique()):
        rows = ok[ok["window"] == window]
        ratio = rows["cost_vs_baseline"].astype(float)
        # Finished at $0 against a baseline of $0 (a free price): no ratio, but not unfinished.
        free = rows[(rows["cost"].astype(float) == 0) & ratio.isna()]
        rows = rows[(ratio > 0) & ratio.map(math.isfinite)]
        configs = rows["config"].unique()
        # The sessions every config of this window finished: sums over the same sessions.
        counts = rows.groupby("session")["config"].nunique()
        shared = counts[counts == len(configs)].index
        rows = rows[rows["session"].isin(shared)]
        if rows.empty and not free.empty:
            costs = dict.fromkeys(free["config"].unique(), 0.0)
            sessions = free["session"].nunique()
            findings.append(baseline_verdict(int(window), costs, 0.0, sessions=sessions))
            continue
        if rows.empty:
            # No session that every config finished (a window the recording's fixed part
            # alone fills, say): said, not left out.
            every = frame[frame["window"] == window]
            findings.append(
                baseline_verdict(
                    int(window),
                    dict.fromkeys(every["config"].unique(), math.nan),
                    math.nan,
                    sessions=every["session"].nunique(),
                )
            )
            continue
        per_session = rows.drop_duplicates("session")
        baseline = float(
            (per_session["cost"] / per_session["cost_vs_baseline"].astype(float)).sum()
        )
        costs = rows.groupby("config")["cost"].sum().astype(float).to_dict()
        findings.append(baseline_verdict(int(window), costs, baseline, sessions=len(shared)))
    return findings


def say_pricing(
    frame: pd.DataFrame,
    sessions: Mapping[str, Transcript],
    price: Price | None,
    rules: CacheRules | None,
) -> None:
    """``attrs["pricing"]``: what each session's costs are priced as (its recorded model's
    price, as `WhatIf` takes it); a finding names the sessions that are unpriced — their costs
    are NaN and the comparisons above leave them out."""
    pricing: dict[str, str] = {}
    unpriced: list[str] = []
    free: list[str] = []
    for name, transcript in sessions.items():
        model = recorded_model(transcript.meta)
        used = price or price_for(model, recorded_on(transcript.meta))
        pricing[name] = pricing_note(model, used, rules or cache_rules_for(model, price))
        if not used.known:
            unpriced.append(name)
        elif used.free:
            free.append(name)
    frame.attrs["pricing"] = pricing
    if free:
        frame.attrs["findings"].append(
            f"{len(free)} of {len(sessions)} sessions are priced at $0 for every token: their "
            "costs are $0 and their cost_vs_baseline NaN (no ratio to a cost of nothing), left "
            f"out of the comparisons of cost: {', '.join(free[:5])}{', ...' if len(free) > 5 else ''}"
        )
    if unpriced:
        frame.attrs["findings"].append(
            f"{len(unpriced)} of {len(sessions)} sessions are unpriced, their costs NaN and left "
            "out of the comparisons: " + "; ".join(f"{name}: {pricing[name]}" for name in unpriced)
        )


def free_verdict(window: int) -> str:
    """The what-if's verdict when the price is $0 a token: why every cost ratio is NaN."""
    return (
        f"With the window at {window:,} tokens, every config costs $0: "
        "the price is $0 for every token, so cost_vs_baseline and cost_vs_no_compaction "
        "are NaN (no ratio to a cost of nothing); compare the configs by tokens_sent, "
        "or pass price=Price(...) to price them."
    )


def priceless_verdict(window: int, price: Price, pricing: str) -> str | None:
    """The what-if's verdict when no cost can be compared — the model is unpriced (``pricing``
    says so) or free (`free_verdict`) — else None."""
    if not price.known:
        return (
            f"With the window at {window:,} tokens, no config's cost can be "
            f"compared: the costs are {pricing}; pass price=Price(...) to price them."
        )
    if price.free:
        return free_verdict(window)
    return None
