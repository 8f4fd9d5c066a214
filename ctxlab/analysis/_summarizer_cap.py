"""The user's summarizer model and its dollar cap, as a `WhatIf` and a `sweep` take them:
checked (a cap with no model to cap is refused), metered (`ModelSummaries`: one budget for every
replay), and a what-if's replays refused before any summary call when the estimate of their
offline replays' summary calls passes the cap. Kept apart so that the what-if and the sweep
stay about replaying and comparing; the budget itself is `ctxlab.analysis._budget`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ctxlab.analysis._budget import checked_budget
from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._model_summaries import ModelSummaries
from ctxlab.analysis._shapes import SentSummary
from ctxlab.exceptions import UsageError

__all__ = ["refuse_over_budget", "summarizer_cap", "sweep_summaries", "whatif_summaries"]


def summarizer_cap(summarizer: object, budget_usd: object) -> float | None:
    """``budget_usd`` checked (`checked_budget`); `UsageError` when it caps no summarizer."""
    cap = checked_budget(budget_usd)
    if cap is not None and summarizer is None:
        msg = "budget_usd caps a summarizer model's calls: pass summarizer=<your Model> too"
        raise UsageError(msg)
    return cap


def whatif_summaries(summarizer: object, budget_usd: object) -> ModelSummaries | None:
    """A what-if's summarizer model, metered under its cap (None: ctxlab's offline extract).
    A `ModelSummaries` is kept as it is: a sweep shares one (one budget) among its what-ifs."""
    cap = summarizer_cap(summarizer, budget_usd)
    if summarizer is None or isinstance(summarizer, ModelSummaries):
        return summarizer
    return ModelSummaries(summarizer, cap)  # type: ignore[arg-type]  # checked there


def sweep_summaries(
    summarizer: object, budget_usd: object, executor: object
) -> ModelSummaries | None:
    """The sweep's summarizer model, metered under its cap; `UsageError` for a cap without
    one, or a summarizer with an executor (one budget is kept in this process)."""
    cap = summarizer_cap(summarizer, budget_usd)
    if summarizer is None:
        return None
    if executor is not None:
        msg = (
            "a sweep whose summaries a model writes runs in this process (executor=None): its "
            "budget is kept here, and a model's SDK client does not travel to workers"
        )
        raise UsageError(msg)
    return ModelSummaries(summarizer, cap)  # type: ignore[arg-type]  # checked there


async def refuse_over_budget(
    summaries: ModelSummaries | None,
    runs: Sequence[ConfigRun],
    replay_offline: Callable[[ConfigRun], Awaitable[None]],
) -> None:
    """`OverBudget` before any summary call when the summaries of ``runs``, estimated from
    their replays with the offline extract (``replay_offline``), pass what remains of the cap;
    nothing to estimate without a model or a cap."""
    # Offline first: the extract's replay says which summary calls the config makes.
    if summaries is None or summaries.budget.cap is None:
        return
    calls: list[SentSummary] = []
    for run in runs:
        offline = ConfigRun(run.name, run.config)
        await replay_offline(offline)
        calls.extend(c for sent in offline.summary_calls.values() for c in sent)
    estimate = summaries.estimate(calls)
    summaries.refuse_over(estimate, [r.name for r in runs])
