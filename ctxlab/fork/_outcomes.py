"""`Outcomes`: what the runs of forked branches did — one row per run, and per branch the
spread over its runs — and where each run's context first parted from the reference run's.

Every figure is read from the run's own record: its manifests (steps, requests, tokens), its
reply or error, the caller's check. Its ``cost`` is each request's bill — the usage its reply
reported, at the price of the model it went to (`usage_cost`) — where the request carries usage,
and ctxlab's estimate (`costs_of_manifests`, priced with prompt caching, the requests before the
fork included so the first request reads what they cached) where it does not; the estimate of
every request is ``cost_estimate`` beside it. ``spent`` is what the run's replies were paid as
they arrived (`ctxlab.analysis._budget`): a reply from the response cache costs $0 there
(``from_cache`` counts them), though its bill stays in ``cost``. The divergence compares the
requests the runs' models were actually sent (`signature`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.agent._forkpoint import REASONING
from ctxlab.analysis._breakeven_of import BREAK_EVEN_COLUMNS, break_even_row, manifest_break_evens
from ctxlab.analysis._budget import checked_budget, dollars
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
from ctxlab.analysis._usage_cost import untrusted, usage_cost
from ctxlab.exceptions import ForkError
from ctxlab.fork._arrival import ARRIVALS
from ctxlab.fork._branch import BranchRun
from ctxlab.fork._branch_stats import STAT_COLUMNS, WIDTH, said, steps_after_compactions
from ctxlab.fork._estimate import ForwardEstimate
from ctxlab.fork._outcomes_table import branch_row, outcomes_html, pd_na
from ctxlab.fork._signature import Signature, first_difference, signature
from ctxlab.fork._stats import CONFIDENCE, checked_confidence, runs_needed
from ctxlab.util._checks import sequence_of, shown

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.manifest import ContextManifest

__all__ = ["OUTCOME_COLUMNS", "SUMMARY_COLUMNS", "Outcomes", "pd_na"]

OUTCOME_COLUMNS = (
    "branch",
    "config",
    "arrival",
    "at",
    "run",
    "steps",
    "requests",
    "compactions",
    "after_compactions",
    "tokens",
    "cost",
    "cost_estimate",
    "cost_from",
    "spent",
    "from_cache",
    "passed",
    "reply",
    "diverges_at",
    "error",
    "notes",
    "seconds",
    "workspace",
)
"""One row per run: its branch and config, how it arrived (`ARRIVALS`) at which step, the
reasoning steps and requests it made from the fork (summary calls included), its compactions
and the reasoning steps it made after each (the one it compacted for included), the input tokens it
sent, its cost in USD by its requests' bills (usage) where they have one and ctxlab's estimate
where not, that estimate for every request, where the cost came from (`COST_FROM`), the USD its
replies were paid as they arrived and how many came from the response cache ($0 spent), the
check's verdict, its final reply, the first step where its context differs from the reference
run's (None: never), its error, notes."""

COST_FROM = ("usage", "estimate", "usage and estimate", "nothing sent")
"""Where a run's ``cost`` comes from: every request's usage, ctxlab's estimate of every
request (no usage reported), some of each, or no request sent."""

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
    "cost_estimate",
    "spent",
    "from_cache",
    "compactions",
    "diverges_at",
    "errors",
    *STAT_COLUMNS,
)
"""One row per branch, over its runs: how many passed the check and replied, the mean steps
(and the least and most), mean tokens and cost (and the cost's standard deviation), the mean
estimated cost, the USD all its runs were paid and their replies from the cache, mean
compactions, the earliest divergence from the reference, how many runs erred; then the
statistics of `ctxlab.fork._branch_stats.STAT_COLUMNS`: runs with a verdict, the pass rate among
them with its Wilson interval, the difference to the reference's rate with its interval (paired
by run number: ``pairs`` pairs; unpaired: ``pairs`` missing), the runs with a verdict a ±
``width`` interval needs at this rate, the mean steps a run made after each compaction."""


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
        confidence: float = CONFIDENCE,
        width: float = WIDTH,
        budget_usd: float | None = None,
        estimate: ForwardEstimate | None = None,
    ) -> None:
        self.runs = list(sequence_of(runs, BranchRun, "runs", "a list of BranchRun"))
        """Every run, in order: branch by branch, run by run."""
        self.reference = reference
        """The branch whose first run the others' contexts are compared with."""
        self.confidence = checked_confidence(confidence)
        """The confidence of the summary's intervals (0.95)."""
        runs_needed(0.5, width)  # the width checked now, not at the first summary
        self.width = float(width)
        """The interval half-length the summary's ``runs_needed`` is for (0.10: ±0.10)."""
        self._price = checked_price(price)
        self._rules = checked_rules(rules)
        self.budget_usd = checked_budget(budget_usd)
        """The call's cap in USD (None: none)."""
        if estimate is not None and not isinstance(estimate, ForwardEstimate):
            msg = f"estimate must be a ForwardEstimate (forward_estimate) or None, got {shown(estimate)}"
            raise ForkError(msg)
        self.estimate = estimate
        """What the call was estimated to cost before it ran (`forward_estimate`)."""
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
            "after_compactions": steps_after_compactions(run.manifests),
            "tokens": sum(max(m.estimated_input_tokens, 0) for m in sent),
            **self._costs(run),
            "spent": run.spent,
            "from_cache": run.from_cache,
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

    def _costs(self, run: BranchRun) -> dict[str, Any]:
        """``cost`` (bills where there is usage, the estimate where not), ``cost_estimate``
        and ``cost_from`` of ``run``."""
        if not run.manifests:
            return {"cost": 0.0, "cost_estimate": 0.0, "cost_from": COST_FROM[3]}
        before = list(run.branch.point.manifests)
        price, rules = self._pricing(run.manifests[0].model)
        # The run's own clock, joined to its origin's: its first request right after the fork.
        costs = costs_of_manifests([*before, *run.manifests], price, rules, joined=len(before))
        estimates = [c.cost for c in costs[len(before) :]]
        bills = [self._bill(m, run.manifests[0].model) for m in run.manifests]
        billed = [b is not None for b in bills]
        cost = math.fsum(e if b is None else b for b, e in zip(bills, estimates, strict=True))
        # NaN for a model no table prices: never $0, never another model's dollars.
        return {
            "cost": cost,
            "cost_estimate": math.fsum(estimates),
            "cost_from": COST_FROM[0 if all(billed) else 1 if not any(billed) else 2],
        }

    def _bill(self, manifest: ContextManifest, model: str) -> float | None:
        """The request's bill: its usage at its model's price (None: no usage it can be)."""
        usage = manifest.provider_usage
        if usage is None or untrusted(usage):
            return None
        price = self._price or price_for(manifest.model or model)
        return usage_cost(usage, price, manifest.purpose).cost

    def _pricing(self, model: str) -> tuple[Price, CacheRules]:
        # Priced as the run's model bills, whatever model the origin's requests went to (a
        # recording of one provider forked onto another's model).
        rules = self._rules or cache_rules_for(model, self._price)
        return self._price or price_for(model), rules

    @property
    def spent(self) -> float:
        """USD every run's replies were paid, as they arrived (the response cache's at $0)."""
        return math.fsum(r["spent"] for r in self._rows)

    @property
    def spending(self) -> str:
        """What was spent, beside the estimate and the cap, in a sentence."""
        said = f"spent {dollars(self.spent)}"
        if self.estimate is not None:
            said += f" (estimated before the runs: {dollars(self.estimate.total)}"
            said += ", the upper side: no cache read, every run to max_steps)"
        if self.budget_usd is not None:
            said += f" under a cap of {dollars(self.budget_usd)}"
        cached = sum(r["from_cache"] for r in self._rows)
        return said + (f"; {cached} replies from the response cache, at $0" if cached else "")

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

    def compactions(self) -> pd.DataFrame:
        """One row per compaction a run made from the fork on (``branch``, ``run``, then
        `ctxlab.analysis._breakeven_of.BREAK_EVEN_COLUMNS`): whether and where it paid back the
        cache it broke, its requests priced as the run's ``cost`` (reading what the arrival
        cached) and timed by when they were sent — docs/concepts/cost.md, "Does a compaction
        pay back?"."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for run in self.runs:
            if not run.manifests:
                continue
            price, rules = self._pricing(run.manifests[0].model)
            before = run.branch.point.manifests
            rows.extend(
                {"branch": run.branch.name, "run": run.run, **break_even_row(even)}
                for even in manifest_break_evens(run.manifests, price, rules, before=before)
            )
        columns = ["branch", "run", *BREAK_EVEN_COLUMNS[1:]]
        frame = pd.DataFrame(rows, columns=columns)
        return frame.astype({"paid_back_at": "Int64", "until": "Int64"})

    def summary(self) -> pd.DataFrame:
        """One row per branch, the spread over its runs and what they say (`SUMMARY_COLUMNS`),
        its intervals at `confidence`, ``runs_needed`` for ± `width`."""
        import pandas as pd

        rows = [self._branch_row(name) for name in self._branches()]
        frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS)).astype(
            {"diverges_at": "Int64", "pairs": "Int64", "runs_needed": "Int64"}
        )
        frame.attrs["reference"] = self.reference
        frame.attrs["confidence"] = self.confidence
        frame.attrs["width"] = self.width
        return frame

    def _branches(self) -> list[str]:
        return list(dict.fromkeys(r["branch"] for r in self._rows))

    def _branch_row(self, name: str) -> dict[str, Any]:
        return branch_row(self._rows, name, self.reference, self.confidence, self.width)

    def findings(self) -> list[str]:
        """Each branch's pass rate, difference to the reference and the runs a ± `width`
        interval needs, in a sentence (`ctxlab.fork._branch_stats.said`)."""
        return [
            said(self._branch_row(name), self.reference, self.confidence, self.width)
            for name in self._branches()
        ]

    def table_html(self) -> str:
        """The per-branch table as static HTML (every value escaped), and what it says."""
        return outcomes_html(
            self.summary(),
            self.reference,
            self.confidence,
            self.width,
            self.findings(),
            self.pricing,
            self.spending,
        )

    def _repr_html_(self) -> str:
        return self.table_html()

    def __repr__(self) -> str:
        branches = list(dict.fromkeys(r.branch.name for r in self.runs))
        return f"Outcomes(branches={branches}, runs={len(self.runs)})"


def _signatures(run: BranchRun) -> list[Signature | None]:
    """The run's requests as signatures at their step numbers (earlier steps left empty)."""
    folders = [str(run.workspace.resolve())] if run.workspace is not None else []
    if run.branch.origin_folder:
        folders.append(run.branch.origin_folder)
    start: list[Signature | None] = [None] * run.branch.first_step
    return start + [None if r is None else signature(r, folders) for r in run.requests]
