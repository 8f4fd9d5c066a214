"""`run_forward`: each branch run forward from its fork — several times each, side by side on
the event loop (bounded), or on Dask workers — and judged by the caller's outcome check.

A run that fails (its model errs, it reaches ``max_steps``, its workspace cannot be made) is a
row with its error; a check that raises or gives no verdict within ``check_timeout`` is a note
on its row (`judge`); the other runs go on. On the event loop at most ``concurrency`` runs
exist at once: each is made when a place frees, so a cancelled ``run_forward`` stops at once.
A run never touches the origin session or its files: it has its own agent, workspace and log
(`Branch.spawn`).

Dollars: every reply is charged at its usage (`ctxlab.analysis._budget`), and with
``budget_usd`` the call is refused before any request when its estimate (`forward_estimate`)
passes the cap, and no request is sent once the replies' dollars reach it: a run in flight
stops at its next request (its row says so, its outcome unknown), no new run starts. In this
process every run shares the one cap, so a call spends at most the cap plus the requests in
flight when it was reached (at most ``concurrency``). On an executor the runs cannot see each
other's spending: each task gets an equal share of the cap (cap / runs in all) and stops at it —
at most the cap plus one request per run, and a cheap run's unspent share is not passed on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ctxlab.agent import Agent
from ctxlab.agent._forkpoint import REASONING
from ctxlab.analysis._budget import Budget, checked_budget
from ctxlab.analysis._cache_rules import checked_rules
from ctxlab.analysis._cost import CacheRules, Price, checked_price
from ctxlab.analysis._sync import run_sync
from ctxlab.analysis._tasks import Task, checked_executor, run_tasks
from ctxlab.events import CompactionEvent, ContextBuildEvent, Event
from ctxlab.exceptions import ForkError
from ctxlab.fork._branch import Branch, BranchRun
from ctxlab.fork._check import CHECK_TIMEOUT, Check, checked_timeout, judge
from ctxlab.fork._estimate import ForwardEstimate, estimate_of
from ctxlab.fork._forward_checks import (
    MAX_CONCURRENCY,
    MAX_RUNS,
    MAX_STEPS,
    branches_of,
    check_arguments,
    short,
    within,
)
from ctxlab.fork._outcomes import Outcomes
from ctxlab.fork._progress import RunBar
from ctxlab.fork._recorded_model import WHOLE, RecordedModel
from ctxlab.fork._spending import metered, stopped_by_budget
from ctxlab.messages import AssistantMessage, TextBlock
from ctxlab.messages._request import ModelRequest
from ctxlab.models import cache_scope

__all__ = ["MAX_CONCURRENCY", "MAX_RUNS", "MAX_STEPS", "forward_estimate", "run_forward"]


async def run_forward(
    branches: Branch | Iterable[Branch],
    *,
    prompt: str | None = None,
    max_steps: int = 30,
    check: Check | None = None,
    check_timeout: float | None = CHECK_TIMEOUT,
    runs: int = 1,
    concurrency: int = 4,
    executor: Any = None,
    reference: str | None = None,
    price: Price | None = None,
    rules: CacheRules | None = None,
    progress: bool = False,
    budget_usd: float | None = None,
) -> Outcomes:
    """Run every branch forward ``runs`` times and return the `Outcomes`.

    Args:
        branches: Branches made by `fork` (names must differ).
        prompt: A message each run is sent first; without one, each run continues its session
            from the fork (its first request is the fork's step).
        max_steps: Reasoning requests allowed per run before it stops (an error in its row).
        check: The outcome check, run on each finished run (see `Check`); it may be async.
            A plain function runs on a thread of its own, off the event loop.
        check_timeout: Seconds each check may take (`CHECK_TIMEOUT`, 10 minutes, by
            default; None: no limit). A check that gives no verdict in time leaves its run's
            ``passed`` unknown (None) with a note saying so; the other runs go on.
        runs: Runs per branch, from 1 (a real model is not deterministic: the outcome table
            gives the spread); at most `MAX_RUNS` runs in all (branches × runs).
        concurrency: Runs in flight at once on the event loop, from 1 to `MAX_CONCURRENCY`.
        executor: A ``dask.distributed.Client`` (or a ``concurrent.futures.Executor``) to run
            on instead: each run is a task that makes its own copy of the branch on a worker
            (workers must see the branch's folder: a ``LocalCluster``, or a shared disk).
        reference: The branch the others' contexts are compared with (the first by default).
        price: Prices for the cost columns, the replies' dollars and the estimate (the
            model's, `price_for`, by default).
        rules: The provider's prompt-cache rules for the estimated cost column.
        progress: Show a progress bar: runs done of all, and the dollars spent.
        budget_usd: A cap in USD on what the replies' usage bills (None: no cap). The call is
            refused (`OverBudget`, before any request) when its estimate passes the cap,
            and no request is sent once the cap is reached (see the module).
    """
    # Long by its docstring (the public API); the body checks the arguments in order, then
    # runs (`_runs`) and gathers the outcomes.
    chosen = branches_of(branches)
    check_arguments(chosen, prompt, max_steps, runs, concurrency, reference)
    timeout = checked_timeout(check_timeout)
    if check is not None and not callable(check):
        msg = f"check must be a function of a run (see ctxlab.fork.Check), got {check!r:.80}"
        raise ForkError(msg)
    checked_price(price)
    checked_rules(rules)
    checked_executor(executor)
    cap = checked_budget(budget_usd)
    estimate = estimate_of(chosen, runs=runs, max_steps=max_steps, price=price)
    within(estimate, cap)
    budget = Budget(cap, price=price)
    how = _How(prompt, max_steps, check, timeout, price)
    done = await _runs(chosen, how, runs, concurrency, executor, progress, budget, estimate)
    return Outcomes(
        done,
        reference or chosen[0].name,
        price=price,
        rules=rules,
        budget_usd=cap,
        estimate=estimate,
    )


async def _runs(
    chosen: list[Branch],
    how: _How,
    runs: int,
    concurrency: int,
    executor: Any,
    progress: bool,
    budget: Budget,
    estimate: ForwardEstimate,
) -> list[BranchRun]:
    """Every run of ``chosen``, done: on the event loop under ``budget`` (with its progress
    bar), or on ``executor``, each task with its share of the cap."""
    if executor is None:
        bar = RunBar(len(chosen) * runs, budget, shown=progress, estimate=short(estimate))
        try:
            return await _in_process(chosen, how, runs, concurrency, budget, bar)
        finally:
            bar.close()
    cap = budget.cap
    share = None if cap is None else cap / (len(chosen) * runs)
    return await _on_executor(chosen, replace(how, share=share), runs, executor, progress)


def forward_estimate(
    branches: Branch | Iterable[Branch],
    *,
    runs: int = 1,
    max_steps: int = 30,
    price: Price | None = None,
) -> ForwardEstimate:
    """What `run_forward` would estimate the call to cost (the figure ``budget_usd`` is checked
    against), without running it: per branch, a request's tokens and dollars and a run's, and
    the ``total`` (see `ctxlab.fork._estimate` for how, and why it is on the upper side for
    reasoning requests)."""
    chosen = branches_of(branches)
    # The prompt is no matter for an estimate: "" passes the check of where a branch forks.
    check_arguments(chosen, "", max_steps, runs, 1, None)
    return estimate_of(chosen, runs=runs, max_steps=max_steps, price=checked_price(price))


@dataclass(frozen=True)
class _How:
    """How each run goes forward: its first message, its steps, its check and time limit."""

    prompt: str | None
    max_steps: int
    check: Check | None
    check_timeout: float | None
    price: Price | None = None
    share: float | None = None
    """Each task's share of the cap, on an executor (None: no cap)."""


async def _in_process(
    branches: list[Branch], how: _How, runs: int, concurrency: int, budget: Budget, bar: RunBar
) -> list[BranchRun]:
    # A few workers, each making its next run when it is free: never more than `concurrency`
    # runs (nor tasks) exist, and cancelling run_forward cancels the workers' runs in flight.
    jobs = list(enumerate((b, n) for b in branches for n in range(runs)))
    pending: Iterator[tuple[int, tuple[Branch, int]]] = iter(jobs)
    done: list[BranchRun | None] = [None] * len(jobs)

    async def worker() -> None:
        for index, (branch, number) in pending:
            done[index] = await _one(branch, number, how, budget)
            bar.done()

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(jobs))):
            group.create_task(worker())
    return [run for run in done if run is not None]


async def _one(branch: Branch, number: int, how: _How, budget: Budget) -> BranchRun:
    """Run ``number`` of ``branch`` (run 0 is the one `fork` made, while untouched); none
    once ``budget`` is reached."""
    if budget.reached:
        return BranchRun(
            branch, number, None, None, error=f"not run: {budget.note.removeprefix('stopped: ')}"
        )
    run = branch.untouched() if number == 0 else None
    if run is None:
        try:
            run = await branch.spawn()
        except Exception as exc:  # a run that cannot be made is a row
            return BranchRun(branch, number, None, None, error=_said(exc))
    await forward(run, how.prompt, how.max_steps, how.check, how.check_timeout, budget)
    return run


async def forward(
    run: BranchRun,
    prompt: str | None,
    max_steps: int,
    check: Check | None,
    check_timeout: float | None = CHECK_TIMEOUT,
    budget: Budget | None = None,
) -> BranchRun:
    """Run ``run``'s agent forward once, its replies charged to ``budget`` (a new one with no
    cap by default), then its check (within ``check_timeout`` seconds); fills the run's
    record. A run stopped at the cap has no verdict: its error says so."""
    agent = run.agent
    assert agent is not None
    agent.max_steps = max_steps
    first = len(agent.manifests)
    requests: list[ModelRequest | None] = []
    compactions = [0]

    def seen(event: Event) -> None:
        if isinstance(event, ContextBuildEvent) and event.manifest.purpose in REASONING:
            requests.append(event.request)
        elif isinstance(event, CompactionEvent):
            compactions[0] += 1

    unsubscribe = agent.subscribe(seen)
    start = time.monotonic()
    budget = budget or Budget()
    stopped = False
    try:
        # Each run is a sample of its own: a response cache keeps it apart from the others
        # (run 2 replays run 2 when the notebook is run again, never run 1).
        with metered(run, budget), cache_scope(f"{run.branch.name}/run {run.run}"):
            reply = await _call(agent, prompt)
        run.reply = "\n".join(b.text for b in reply.content if isinstance(b, TextBlock))
    except Exception as exc:  # the run's failure is its row's error; the others go on
        stopped = stopped_by_budget(run, budget)
        run.error = budget.note if stopped else _said(exc)
    finally:
        unsubscribe()
        run.seconds = time.monotonic() - start
    run.manifests = agent.manifests[first:]
    run.requests = requests
    run.compactions = compactions[0]
    if _unjudged(run) or stopped:
        return run  # a replay that ended where the contexts part, a run stopped at the cap
    if check is not None:
        await judge(run, check, check_timeout)
    return run


async def _call(agent: Agent, prompt: str | None) -> AssistantMessage:
    """The agent's call; a replay of a recording (`RecordedModel`) goes on with each later
    message its user sent, as recorded, while the contexts have not parted."""
    reply = await agent.call(prompt)
    model = agent.model
    while isinstance(model, RecordedModel) and (said := model.next_message()) is not None:
        reply = await agent.call(said)
    return reply


def _unjudged(run: BranchRun) -> bool:
    """Whether ``run`` replayed its recording (`RecordedModel`) and ended with an outcome no
    check can know: where the contexts part (its reply is the replay's, not an agent's), or at
    the recording's end (every reply and result was the recording's: nothing ran here)."""
    model = run.agent.model if run.agent is not None else None
    if not isinstance(model, RecordedModel):
        return False
    if model.parted_at is None:
        if run.error is not None or model.answered == 0:
            return False
        run.notes.append(WHOLE.format(d=model.start + model.answered - 1))
        run.passed = None
        return True
    if model.then is not None:
        run.notes.append(f"replayed to request {model.parted_at}, then {model.then.name}")
        return False
    run.notes.append(model.note or "")
    run.reply, run.passed = None, None
    return True


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# -- on workers --------------------------------------------------------------------------------


def run_remote(job: int, branch: Branch, number: int, how: _How) -> list[tuple[int, BranchRun]]:
    """Run ``number`` of ``branch`` on a worker (a task of `run_tasks`): its place among the
    tasks and its record (the agent stays on the worker)."""

    async def go() -> BranchRun:
        try:
            run = await branch.spawn(number)
        except Exception as exc:
            return BranchRun(branch, number, None, None, error=_said(exc))
        budget = Budget(how.share, price=how.price)
        await forward(run, how.prompt, how.max_steps, how.check, how.check_timeout, budget)
        run.agent = None
        return run

    return [(job, run_sync(go()))]


async def _on_executor(
    branches: list[Branch], how: _How, runs: int, executor: Any, progress: bool
) -> list[BranchRun]:
    jobs: list[tuple[Branch, int]] = []
    for branch in branches:
        # Numbers this process has not used: each worker's run gets a folder of its own.
        jobs.extend((branch, branch._made + n) for n in range(runs))
        branch._made += runs
    tasks: list[Task] = [
        (run_remote, (job, branch, number, how), 1) for job, (branch, number) in enumerate(jobs)
    ]

    def lost(job: int, exc: BaseException) -> list[tuple[int, BranchRun]]:
        branch, number = jobs[job]
        return [(job, BranchRun(branch, number, None, None, error=f"not run: {_said(exc)}"))]

    records, _ = await asyncio.to_thread(
        run_tasks, tasks, executor, progress=progress, unit="run", finished=_ignore, lost=lost
    )
    by_job = dict(records)
    done: list[BranchRun] = []
    for job, (branch, number) in enumerate(jobs):
        run = by_job.get(job) or BranchRun(branch, number, None, None, error="not run: stopped")
        run.branch = branch  # this process's branch, not the worker's copy of it
        done.append(run)
    return done


def _ignore(rows: list[Any]) -> None:
    return None
