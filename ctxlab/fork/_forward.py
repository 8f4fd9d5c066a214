"""`run_forward`: each branch run forward from its fork — several times each, side by side on
the event loop (bounded), or on Dask workers — and judged by the caller's outcome check.

A run that fails (its model errs, it reaches ``max_steps``, its workspace cannot be made) is a
row with its error; the other runs go on. A run never touches the origin session or its files:
it has its own agent, workspace and log (`Branch.spawn`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ctxlab.agent._forkpoint import REASONING
from ctxlab.analysis._cost import CacheRules, Price, checked_price
from ctxlab.analysis._sync import run_sync
from ctxlab.analysis._tasks import Task, run_tasks
from ctxlab.events import CompactionEvent, ContextBuildEvent, Event
from ctxlab.exceptions import ForkError
from ctxlab.fork._branch import Branch, BranchRun
from ctxlab.fork._outcomes import Outcomes
from ctxlab.messages import AssistantMessage, TextBlock
from ctxlab.messages._request import ModelRequest

__all__ = ["Check", "run_forward"]

Check = Callable[[BranchRun], bool | Awaitable[bool]]
"""The outcome check: given a finished run (its ``workspace``, ``reply``, ``agent``), whether
the task is done — e.g. the project's tests pass in the run's workspace."""


async def run_forward(
    branches: Branch | Iterable[Branch],
    *,
    prompt: str | None = None,
    max_steps: int = 30,
    check: Check | None = None,
    runs: int = 1,
    concurrency: int = 4,
    executor: Any = None,
    reference: str | None = None,
    price: Price | None = None,
    rules: CacheRules | None = None,
    progress: bool = False,
) -> Outcomes:
    """Run every branch forward ``runs`` times and return the `Outcomes`.

    Args:
        branches: Branches made by `fork` (names must differ).
        prompt: A message each run is sent first; without one, each run continues its session
            from the fork (its first request is the fork's step).
        max_steps: Reasoning requests allowed per run before it stops (an error in its row).
        check: The outcome check, run on each finished run (see `Check`); it may be async.
        runs: Runs per branch (a real model is not deterministic: the outcome table gives
            the spread).
        concurrency: Runs in flight at once on the event loop.
        executor: A ``dask.distributed.Client`` (or a ``concurrent.futures.Executor``) to run
            on instead: each run is a task that makes its own copy of the branch on a worker
            (workers must see the branch's folder: a ``LocalCluster``, or a shared disk).
        reference: The branch the others' contexts are compared with (the first by default).
        price: Prices for the cost column (the model's, `price_for`, by default).
        rules: The provider's prompt-cache rules for the cost column.
        progress: Show a progress bar (runs on an executor).
    """
    chosen = [branches] if isinstance(branches, Branch) else list(branches)
    _check_arguments(chosen, prompt, max_steps, runs, concurrency, reference)
    checked_price(price)
    if executor is None:
        done = await _in_process(chosen, prompt, max_steps, check, runs, concurrency)
    else:
        done = await _on_executor(chosen, prompt, max_steps, check, runs, executor, progress)
    return Outcomes(done, reference or chosen[0].name, price=price, rules=rules)


def _check_arguments(
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
    for value, what in ((max_steps, "max_steps"), (runs, "runs"), (concurrency, "concurrency")):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            msg = f"{what} must be a whole number from 1, got {value!r}"
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


async def _in_process(
    branches: list[Branch],
    prompt: str | None,
    max_steps: int,
    check: Check | None,
    runs: int,
    concurrency: int,
) -> list[BranchRun]:
    gate = asyncio.Semaphore(concurrency)

    async def one(branch: Branch, number: int) -> BranchRun:
        async with gate:
            run = branch.untouched() if number == 0 else None
            if run is None:
                try:
                    run = await branch.spawn()
                except Exception as exc:  # a run that cannot be made is a row
                    return BranchRun(branch, number, None, None, error=_said(exc))
            await forward(run, prompt, max_steps, check)
            return run

    return list(await asyncio.gather(*(one(b, n) for b in branches for n in range(runs))))


async def forward(
    run: BranchRun, prompt: str | None, max_steps: int, check: Check | None
) -> BranchRun:
    """Run ``run``'s agent forward once, then its check; fills the run's record."""
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
    try:
        reply = await agent.call(prompt)
        run.reply = "\n".join(b.text for b in reply.content if isinstance(b, TextBlock))
    except Exception as exc:  # the run's failure is its row's error; the others go on
        run.error = _said(exc)
    finally:
        unsubscribe()
        run.seconds = time.monotonic() - start
    run.manifests = agent.manifests[first:]
    run.requests = requests
    run.compactions = compactions[0]
    if check is not None:
        try:
            verdict = check(run)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            run.passed = bool(verdict)
        except Exception as exc:
            run.notes.append(f"the check raised {_said(exc)}")
    return run


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# -- on workers --------------------------------------------------------------------------------


def run_remote(
    job: int,
    branch: Branch,
    number: int,
    prompt: str | None,
    max_steps: int,
    check: Check | None,
) -> list[tuple[int, BranchRun]]:
    """Run ``number`` of ``branch`` on a worker (a task of `run_tasks`): its place among the
    tasks and its record (the agent stays on the worker)."""

    async def go() -> BranchRun:
        try:
            run = await branch.spawn(number)
        except Exception as exc:
            return BranchRun(branch, number, None, None, error=_said(exc))
        await forward(run, prompt, max_steps, check)
        run.agent = None
        return run

    return [(job, run_sync(go()))]


async def _on_executor(
    branches: list[Branch],
    prompt: str | None,
    max_steps: int,
    check: Check | None,
    runs: int,
    executor: Any,
    progress: bool,
) -> list[BranchRun]:
    jobs: list[tuple[Branch, int]] = []
    for branch in branches:
        # Numbers this process has not used: each worker's run gets a folder of its own.
        jobs.extend((branch, branch._made + n) for n in range(runs))
        branch._made += runs
    tasks: list[Task] = [
        (run_remote, (job, branch, number, prompt, max_steps, check), 1)
        for job, (branch, number) in enumerate(jobs)
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
