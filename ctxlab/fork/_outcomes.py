"""`Outcomes`: what the runs of forked branches did — one row per run, and per branch the
spread over its runs — and where each run's context first parted from the reference run's.

Every figure is read from the run's own record: its manifests (steps, requests, tokens, cost
priced with prompt caching, `costs_of_manifests`, the requests before the fork included so the
first request reads what they cached), its reply or error, the caller's check. The divergence
compares the requests the runs' models were actually sent (`signature`).
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.agent._forkpoint import REASONING
from ctxlab.analysis._cache_rules import checked_rules
from ctxlab.analysis._cost import (
    CacheRules,
    Price,
    cache_rules_for,
    costs_of_manifests,
    price_for,
    pricing_note,
)
from ctxlab.analysis._price import checked_price
from ctxlab.exceptions import ForkError
from ctxlab.fork._arrival import ARRIVALS
from ctxlab.fork._branch import BranchRun
from ctxlab.fork._signature import Signature, first_difference, signature
from ctxlab.util._checks import sequence_of, shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OUTCOME_COLUMNS", "SUMMARY_COLUMNS", "Outcomes"]

OUTCOME_COLUMNS = (
    "branch",
    "config",
    "arrival",
    "at",
    "run",
    "steps",
    "requests",
    "compactions",
    "tokens",
    "cost",
    "passed",
    "reply",
    "diverges_at",
    "error",
    "notes",
    "seconds",
    "workspace",
)
"""One row per run: its branch and config, how it arrived (`ARRIVALS`) at which step, the
reasoning steps and requests it made from the fork (summary calls included), its compactions,
the input tokens it sent, its cost in USD, the check's verdict, its final reply, the first
step where its context differs from the reference run's (None: never), its error, notes."""

SUMMARY_COLUMNS = (
    "branch",
    "config",
    "arrival",
    "at",
    "runs",
    "passed",
    "replied",
    "steps",
    "steps_min",
    "steps_max",
    "tokens",
    "cost",
    "cost_sd",
    "compactions",
    "diverges_at",
    "errors",
)
"""One row per branch, over its runs: how many passed the check and replied, the mean steps
(and the least and most), mean tokens and cost (and the cost's standard deviation), mean
compactions, the earliest divergence from the reference, how many runs erred."""


_INTEGERS = {"diverges_at": "Int64", "passed": "boolean"}
"""Counts stay whole numbers, verdicts booleans, where some rows have none."""


class Outcomes:
    """The runs of `run_forward` and what they did (see the module); ``reference`` names the
    branch whose first run the others are compared with (`ForkError` when no run is of it)."""

    def __init__(
        self,
        runs: Sequence[BranchRun],
        reference: str,
        *,
        price: Price | None = None,
        rules: CacheRules | None = None,
    ) -> None:
        self.runs = list(sequence_of(runs, BranchRun, "runs", "a list of BranchRun"))
        """Every run, in order: branch by branch, run by run."""
        self.reference = reference
        """The branch whose first run the others' contexts are compared with."""
        self._price = checked_price(price)
        self._rules = checked_rules(rules)
        base = next((r for r in self.runs if r.branch.name == reference), None)
        if base is None:
            names = list(dict.fromkeys(r.branch.name for r in self.runs))
            msg = f"reference {reference!r} is none of the runs' branches: {names}"
            raise ForkError(msg)
        self._base = _signatures(base)
        # Steps before the reference's own fork have nothing of its own to compare with.
        self._first = base.branch.first_step
        self._rows = [self._row(run) for run in self.runs]
        self._by_run = {id(run): row for run, row in zip(self.runs, self._rows, strict=True)}

    def row(self, run: BranchRun) -> dict[str, Any]:
        """The outcome row of ``run`` (one of `runs`; `OUTCOME_COLUMNS`)."""
        row = self._by_run.get(id(run))
        if row is None:
            msg = f"run must be one of these outcomes' runs (Outcomes.runs), got {shown(run)}"
            raise ForkError(msg)
        return dict(row)

    def _row(self, run: BranchRun) -> dict[str, Any]:
        branch = run.branch
        sent = [m for m in run.manifests if m.purpose in (*REASONING, "summary")]
        steps = sum(m.purpose in REASONING for m in run.manifests)
        return {
            "branch": branch.name,
            "config": branch.config_name,
            "arrival": ARRIVALS[branch.arrival],
            "at": branch.at,
            "run": run.run,
            "steps": steps,
            "requests": len(sent),
            "compactions": run.compactions,
            "tokens": sum(max(m.estimated_input_tokens, 0) for m in sent),
            "cost": self._cost(run),
            "passed": run.passed,
            "reply": run.reply,
            "diverges_at": first_difference(
                self._base, _signatures(run), max(branch.first_step, self._first)
            ),
            "error": run.error,
            "notes": "; ".join(run.notes) or None,
            "seconds": round(run.seconds, 3),
            "workspace": str(run.workspace) if run.workspace is not None else None,
        }

    def _cost(self, run: BranchRun) -> float:
        if not run.manifests:
            return 0.0
        before = list(run.branch.point.manifests)
        price, rules = self._pricing(run.manifests[0].model)
        # The run's own clock, joined to its origin's: its first request right after the fork.
        costs = costs_of_manifests([*before, *run.manifests], price, rules, joined=len(before))
        # NaN for a model no table prices: never $0, never another model's dollars.
        return float(sum(c.cost for c in costs[len(before) :]))

    def _pricing(self, model: str) -> tuple[Price, CacheRules]:
        # Priced as the run's model bills, whatever model the origin's requests went to (a
        # recording of one provider forked onto another's model).
        rules = self._rules or cache_rules_for(model, self._price)
        return self._price or price_for(model), rules

    @property
    def pricing(self) -> list[str]:
        """What each run's model's costs are priced as, once per model (`pricing_note`): the
        price and its source, or ``unpriced (model X has no known price)``."""
        models = dict.fromkeys(r.manifests[0].model for r in self.runs if r.manifests)
        return [pricing_note(m, *self._pricing(m)) for m in models]

    def frame(self) -> pd.DataFrame:
        """One row per run (`OUTCOME_COLUMNS`)."""
        import pandas as pd

        frame = pd.DataFrame(self._rows, columns=list(OUTCOME_COLUMNS)).astype(_INTEGERS)
        frame.attrs["reference"] = self.reference
        return frame

    def summary(self) -> pd.DataFrame:
        """One row per branch, the spread over its runs (`SUMMARY_COLUMNS`)."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for name in dict.fromkeys(r["branch"] for r in self._rows):
            mine = [r for r in self._rows if r["branch"] == name]
            costs = [r["cost"] for r in mine]
            steps = [r["steps"] for r in mine]
            diverged = [r["diverges_at"] for r in mine if r["diverges_at"] is not None]
            rows.append(
                {
                    **{k: mine[0][k] for k in ("branch", "config", "arrival", "at")},
                    "runs": len(mine),
                    "passed": sum(r["passed"] is True for r in mine),
                    "replied": sum(r["reply"] is not None for r in mine),
                    "steps": statistics.fmean(steps),
                    "steps_min": min(steps),
                    "steps_max": max(steps),
                    "tokens": statistics.fmean(r["tokens"] for r in mine),
                    "cost": statistics.fmean(costs),
                    "cost_sd": _spread(costs),
                    "compactions": statistics.fmean(r["compactions"] for r in mine),
                    "diverges_at": min(diverged) if diverged else None,
                    "errors": sum(r["error"] is not None for r in mine),
                }
            )
        frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS)).astype({"diverges_at": "Int64"})
        frame.attrs["reference"] = self.reference
        return frame

    def table_html(self) -> str:
        """The per-branch table as static HTML (every value escaped)."""
        frame = self.summary()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
            for row in frame.itertuples(index=False)
        )
        note = (
            f"<div class='ctxlab-outcomes-note'>passed and replied: runs out of "
            f"{html.escape(str(frame['runs'].max()))}; diverges_at: the first step where a "
            f"run's context differs from {html.escape(self.reference)!s}'s first run.</div>"
        )
        note += "".join(
            f"<div class='ctxlab-pricing'>cost: {html.escape(p)}</div>" for p in self.pricing
        )
        return (
            f"<table class='ctxlab-outcomes'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{note}"
        )

    def _repr_html_(self) -> str:
        return self.table_html()

    def __repr__(self) -> str:
        branches = list(dict.fromkeys(r.branch.name for r in self.runs))
        return f"Outcomes(branches={branches}, runs={len(self.runs)})"


def _spread(costs: list[float]) -> float:
    """The standard deviation of the runs' costs: NaN when any is unpriced (statistics.stdev
    raises on NaN), 0 for one run."""
    if any(math.isnan(c) for c in costs):
        return math.nan
    return statistics.stdev(costs) if len(costs) > 1 else 0.0


def pd_na() -> object:
    """pandas' missing value (``<NA>``, in a nullable column), which compares to nothing."""
    import pandas as pd

    return pd.NA


def _signatures(run: BranchRun) -> list[Signature | None]:
    """The run's requests as signatures at their step numbers (earlier steps left empty)."""
    folders = [str(run.workspace.resolve())] if run.workspace is not None else []
    if run.branch.origin_folder:
        folders.append(run.branch.origin_folder)
    start: list[Signature | None] = [None] * run.branch.first_step
    return start + [None if r is None else signature(r, folders) for r in run.requests]


def _cell(value: Any) -> str:
    if value is None or value is pd_na() or value != value:  # None, <NA> or NaN
        return "–"
    if isinstance(value, float):
        if value.is_integer():
            return f"{int(value):,}"  # a mean of whole numbers that is one
        return f"{value:.4f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)
