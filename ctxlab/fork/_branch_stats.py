"""What a branch's runs say with the uncertainty a handful of runs leaves: its pass rate with a
Wilson interval, its difference to the reference branch (paired by run number when both ran
the same runs, else unpaired), the runs a narrower interval would need, and how many steps its
runs made after each compaction. The formulas are `ctxlab.fork._stats`'.

A run with no verdict (no check, a check that raised or timed out: ``passed`` None) is neither
a pass nor a failure: it is left out of the rate, and ``verdicts`` says how many runs have one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ctxlab.agent._forkpoint import REASONING
from ctxlab.fork._stats import (
    Interval,
    paired_difference,
    runs_needed,
    unpaired_difference,
    wilson,
)
from ctxlab.manifest._kinds import TRANSFORM_KINDS

__all__ = ["STAT_COLUMNS", "WIDTH", "branch_statistics", "said", "steps_after_compactions"]

WIDTH = 0.10
"""The interval half-length `runs_needed` is asked about unless another is given (±0.10)."""

STAT_COLUMNS = (
    "verdicts",
    "pass_rate",
    "pass_low",
    "pass_high",
    "difference",
    "difference_low",
    "difference_high",
    "pairs",
    "runs_needed",
    "steps_after_compaction",
)
"""Per branch: runs with a verdict; the pass rate among them and its Wilson interval; the
difference of rates to the reference and its interval; the pairs of runs it was measured on
(None: unpaired); the runs with a verdict a ± `WIDTH` interval needs at this rate; the mean
reasoning steps a run made after each of its compactions."""

_COMPACTING = frozenset(k for k, info in TRANSFORM_KINDS.items() if info.effect == "compaction")
"""Transforms that compact the conversation (summarized, dropped, the recording's own)."""


def steps_after_compactions(manifests: Sequence[Any]) -> tuple[int, ...]:
    """For each compaction among a run's ``manifests``, in order: the reasoning requests it
    sent from then on — the one the compaction was made for included (it was sent compacted);
    after a compaction of its own (``purpose="compaction"``), the ones that follow."""
    reasoning = [m.purpose in REASONING for m in manifests]
    after: list[int] = []
    for index, manifest in enumerate(manifests):
        if manifest.purpose not in (*REASONING, "compaction"):
            continue  # a summary call's own request compacts nothing
        if any(t.kind in _COMPACTING for t in manifest.transforms):
            after.append(sum(reasoning[index:]))
    return tuple(after)


def branch_statistics(
    mine: Sequence[dict[str, Any]],
    reference: Sequence[dict[str, Any]] | None,
    confidence: float,
    width: float,
) -> dict[str, Any]:
    """`STAT_COLUMNS` of one branch from its outcome rows; ``reference`` the reference
    branch's rows (None: this is the reference, which has no difference to itself)."""
    verdicts = [r["passed"] for r in mine if r["passed"] is not None]
    rate = wilson(sum(verdicts), len(verdicts), confidence)
    difference, pairs = _difference(mine, reference, confidence)
    after = [n for r in mine for n in r["after_compactions"]]
    return {
        "verdicts": len(verdicts),
        "pass_rate": rate.estimate,
        "pass_low": rate.low,
        "pass_high": rate.high,
        "difference": difference.estimate,
        "difference_low": difference.low,
        "difference_high": difference.high,
        "pairs": pairs,
        "runs_needed": runs_needed(rate.estimate, width, confidence) if rate.known else None,
        "steps_after_compaction": statistics.fmean(after) if after else math.nan,
    }


def _difference(
    mine: Sequence[dict[str, Any]],
    reference: Sequence[dict[str, Any]] | None,
    confidence: float,
) -> tuple[Interval, int | None]:
    """The pass rate's difference to the reference's and the pairs it was measured on: run k
    against run k when both branches ran the same run numbers (pairs where either has no
    verdict left out), else the two branches' verdicts apart (pairs None)."""
    if reference is None:
        return Interval(math.nan, math.nan, math.nan), None
    theirs = {r["run"]: r["passed"] for r in reference}
    if sorted(r["run"] for r in mine) == sorted(theirs):
        pairs = [
            (r["passed"], theirs[r["run"]])
            for r in mine
            if r["passed"] is not None and theirs[r["run"]] is not None
        ]
        return paired_difference(pairs, confidence), len(pairs)
    this = [r["passed"] for r in mine if r["passed"] is not None]
    that = [p for p in theirs.values() if p is not None]
    return unpaired_difference(sum(this), len(this), sum(that), len(that), confidence), None


def said(row: dict[str, Any], reference: str, confidence: float, width: float) -> str:
    """One branch's summary row (with `STAT_COLUMNS`) in a sentence a person can act on."""
    level = f"{confidence:.0%}" if (confidence * 100).is_integer() else f"{confidence:.1%}"
    if row["verdicts"] == 0:
        return (
            f"{row['branch']}: no run has a verdict (no check, or it gave none): no pass rate, "
            "no interval."
        )
    text = (
        f"{row['branch']}: {row['passed']} of {row['verdicts']} runs with a verdict passed, "
        f"{row['pass_rate']:.2f} ({level} interval {row['pass_low']:.2f} to "
        f"{row['pass_high']:.2f})"
    )
    if not math.isnan(row["difference"]):
        how = f"paired by run, {row['pairs']} pairs" if row["pairs"] is not None else "unpaired"
        text += (
            f"; {row['difference']:+.2f} against {reference} ({how}: "
            f"{row['difference_low']:+.2f} to {row['difference_high']:+.2f})"
        )
    elif row["branch"] != reference:
        text += f"; no verdicts of {reference}'s to compare with"
    return text + f"; ±{width:.2f} needs {row['runs_needed']} runs at this rate."
