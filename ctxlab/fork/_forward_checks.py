"""What `run_forward` checks before it starts: the branches it was given, its numbers in their
bounds, a reference among the branches, a branch with something to continue, and the estimate
within the dollar cap (`OverBudget` before any request)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

from ctxlab.exceptions import ForkError, OverBudget
from ctxlab.fork._branch import Branch
from ctxlab.fork._estimate import ForwardEstimate
from ctxlab.messages import AssistantMessage
from ctxlab.util._checks import shown

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_RUNS",
    "MAX_STEPS",
    "branches_of",
    "check_arguments",
    "short",
    "within",
]

MAX_RUNS = 1_000
"""The most runs one `run_forward` makes (branches × ``runs``): each is a folder, an agent
and a model's session of its own. Call it again for more."""

MAX_CONCURRENCY = 64
"""The most runs in flight at once on the event loop (``concurrency``)."""

MAX_STEPS = 100_000
"""The most reasoning requests one run may make (``max_steps``): a run's estimate is priced at
``max_steps`` requests, and a figure past this is a typo, not a plan."""


def branches_of(branches: object) -> list[Branch]:
    if isinstance(branches, Branch):
        return [branches]
    if isinstance(branches, str | bytes) or not isinstance(branches, Iterable):
        msg = f"run_forward takes branches made by ctxlab.fork, got {type(branches).__name__}"
        raise ForkError(msg)
    # Taken up to one past the most a call makes: an endless iterable is refused, not read.
    chosen = list(itertools.islice(branches, MAX_RUNS + 1))
    if len(chosen) > MAX_RUNS:
        msg = f"run_forward runs at most {MAX_RUNS:,} branches (MAX_RUNS runs in all) in one call"
        raise ForkError(msg)
    return chosen


def check_arguments(
    branches: list[Branch],
    prompt: str | None,
    max_steps: int,
    runs: int,
    concurrency: int,
    reference: str | None,
) -> None:
    if not branches or not all(isinstance(b, Branch) for b in branches):
        msg = "run_forward takes branches made by ctxlab.fork (at least one)"
        raise ForkError(msg)
    names = [b.name for b in branches]
    if len(set(names)) != len(names):
        msg = f"branch names must differ to tell their outcomes apart: {names}"
        raise ForkError(msg)
    if prompt is not None and not isinstance(prompt, str):
        msg = f"prompt must be the text of a message (a str) or None, got {type(prompt).__name__}"
        raise ForkError(msg)
    for value, what, most in (
        (max_steps, "max_steps", MAX_STEPS),
        (runs, "runs", MAX_RUNS),
        (concurrency, "concurrency", MAX_CONCURRENCY),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
            msg = f"{what} must be a whole number from 1 to {most:,}, got {shown(value)}"
            raise ForkError(msg)
    if len(branches) * runs > MAX_RUNS:
        msg = (
            f"runs={runs:,} for {len(branches):,} branches is {len(branches) * runs:,} runs; "
            f"run_forward makes at most {MAX_RUNS:,} in one call (MAX_RUNS): fewer runs, or "
            "call it again"
        )
        raise ForkError(msg)
    if reference is not None and reference not in names:
        msg = f"reference {reference!r} is none of the branches: {names}"
        raise ForkError(msg)
    if prompt is None:
        ended = [b.name for b in branches if _ended(b)]
        if ended:
            msg = (
                f"branch {ended[0]!r} forks where its session had replied: there is nothing to "
                "continue. Give run_forward a prompt=..., or fork at an earlier step"
            )
            raise ForkError(msg)


def _ended(branch: Branch) -> bool:
    conversation = branch.point.state.conversation
    return (
        bool(conversation)
        and isinstance(conversation[-1], AssistantMessage)
        and not (conversation[-1].tool_uses)
    )


def within(estimate: ForwardEstimate, cap: float | None) -> None:
    """`OverBudget` when ``estimate`` passes ``cap`` (or cannot be priced under one)."""
    if cap is None:
        return
    total = estimate.total
    if math.isnan(total):
        unpriced = [b.model for b in estimate.branches if math.isnan(b.per_run)]
        msg = (
            f"run_forward cannot keep a budget_usd cap of ${cap:,.2f}: model {unpriced[0]!r} "
            "has no known price. Give price=Price(...) (USD per million tokens) to price it"
        )
        raise OverBudget(msg, estimate=total, cap=cap)
    if total > cap:
        msg = (
            f"run_forward was not started: {estimate}; that passes the budget_usd cap of "
            f"${cap:,.2f}. Run fewer runs or branches, lower max_steps (each run is priced at "
            "max_steps requests), or raise budget_usd"
        )
        raise OverBudget(msg, estimate=total, cap=cap)


def short(estimate: ForwardEstimate) -> str:
    return f"runs (estimate ${estimate.total:,.2f})" if estimate.total > 0 else "runs"
