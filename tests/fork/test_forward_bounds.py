"""`run_forward` bounded: a check that never answers is given up at ``check_timeout`` (its run's
verdict unknown, with a note) while every other run's outcome is returned; a cancelled
``run_forward`` returns at once, having made no run past those in flight; ``runs``,
``concurrency``, ``check_timeout`` and the rest refused up front, by name, before any run is
made — ``runs=10**6`` at once, not after building a million runs."""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from ctxlab.demo import DEMO_WORKSPACE
from ctxlab.exceptions import ForkError
from ctxlab.fork import (
    CHECK_TIMEOUT,
    MAX_CONCURRENCY,
    MAX_RUNS,
    Branch,
    BranchRun,
    fork,
    run_forward,
)
from tests.fork.helpers import demo_session


def _within(seconds: float, make: Callable[[], Coroutine[Any, Any, Any]]) -> BaseException | None:
    """What ``make()`` raised, run on a loop of its own in a daemon thread; a test failure when
    it has not ended within ``seconds`` (a call that hangs fails, it does not hang the suite)."""
    raised: list[BaseException | None] = []

    def target() -> None:
        try:
            asyncio.run(make())
            raised.append(None)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if not raised:
        pytest.fail(f"did not return within {seconds} s")
    return raised[0]


async def _branch(tmp_path: Path, name: str | None = None) -> Branch:
    session = await demo_session(tmp_path / "s")
    return await fork(session.agent, at=2, name=name, workspace=DEMO_WORKSPACE, root=tmp_path / "b")


async def test_a_check_that_never_answers_is_given_up_and_the_other_runs_kept(
    tmp_path: Path,
) -> None:
    branch = await _branch(tmp_path)
    release = threading.Event()
    cancelled: list[int] = []

    # Each call makes runs numbered on (0-3, then 4-7): the run of each four that sticks.
    def hangs_on_run_one(run: BranchRun) -> bool:
        if run.run % 4 == 1:
            release.wait()  # never, until the test ends: a check that does not answer
        return run.reply is not None

    async def sleeps_on_run_two(run: BranchRun) -> bool:
        if run.run % 4 == 2:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.append(run.run)
                raise
        return run.reply is not None

    try:
        for check in (hangs_on_run_one, sleeps_on_run_two):
            start = time.monotonic()
            outcomes = await run_forward(
                branch, runs=4, concurrency=2, check=check, check_timeout=0.5, max_steps=8
            )
            assert time.monotonic() - start < 60
            frame = outcomes.frame()
            stuck = 1 if check is hangs_on_run_one else 2
            assert list(frame["run"]) == ([0, 1, 2, 3] if stuck == 1 else [4, 5, 6, 7])
            assert [r.passed for r in outcomes.runs] == [
                None if i == stuck else True for i in range(4)
            ]
            assert [r.notes for r in outcomes.runs][stuck] == [
                "the check gave no verdict within 0.5 s (check_timeout): its verdict is unknown"
            ]
            # The run itself finished: its reply and steps are there, like the others'.
            assert frame["reply"].notna().all() and frame["error"].isna().all()
            assert len(set(frame["steps"])) == 1
    finally:
        release.set()
    assert cancelled == [6]  # an async check is cancelled at the limit, not left running


async def test_a_check_that_fails_or_raises_timeout_itself_is_not_a_timeout(
    tmp_path: Path,
) -> None:
    branch = await _branch(tmp_path)

    async def its_own_timeout(run: BranchRun) -> bool:
        await asyncio.wait_for(asyncio.sleep(10), 0.01)
        return True

    def raises(run: BranchRun) -> bool:
        msg = "no such test"
        raise LookupError(msg)

    timed = await run_forward(branch, check=its_own_timeout, check_timeout=30, max_steps=8)
    assert timed.runs[0].notes == ["the check raised TimeoutError: "]
    raised = await run_forward(branch, check=raises, max_steps=8)
    assert raised.runs[0].notes == ["the check raised LookupError: no such test"]
    assert timed.runs[0].passed is None and raised.runs[0].passed is None


async def test_a_cancelled_run_forward_returns_at_once(tmp_path: Path) -> None:
    branch = await _branch(tmp_path)
    started = threading.Event()
    release = threading.Event()
    began: list[float] = []

    def slow(run: BranchRun) -> bool:
        began.append(time.monotonic())
        started.set()
        release.wait(5)  # a long test suite, blocking its thread
        return True

    task = asyncio.create_task(
        run_forward(branch, runs=40, concurrency=2, check=slow, check_timeout=None, max_steps=8)
    )
    try:
        while not started.is_set():  # the first check is running
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        took = time.monotonic() - began[0]
    finally:
        release.set()
    assert took < 2.0, took  # not after the check's 5 s, nor after 40 runs
    # No run was made after the cancellation: the two in flight at most, beside run 0.
    made = sorted(p.name for p in branch.folder.glob("run-*"))
    assert 2 <= len(made) <= 3, made


def test_the_documented_bounds() -> None:
    assert (MAX_RUNS, MAX_CONCURRENCY, CHECK_TIMEOUT) == (1_000, 64, 600.0)


async def test_arguments_refused_up_front(tmp_path: Path) -> None:
    branch = await _branch(tmp_path)
    other = await _branch(tmp_path / "o", name="other")
    folders = sorted(p.name for p in branch.folder.iterdir())
    # A million runs: refused at once (run on a loop of its own so that a regression fails,
    # rather than hang building them).
    start = time.monotonic()
    refused = _within(30, lambda: run_forward(branch, runs=10**6))
    assert isinstance(refused, ForkError)
    assert str(refused) == "runs must be a whole number from 1 to 1,000, got 1000000"
    assert time.monotonic() - start < 5
    for given, says in (
        (
            {"branches": [branch, other], "runs": 501},
            r"^runs=501 for 2 branches is 1,002 runs; run_forward makes at most 1,000 in one "
            r"call \(MAX_RUNS\): fewer runs, or call it again$",
        ),
        ({"runs": 0}, "runs must be a whole number from 1 to 1,000, got 0"),
        ({"runs": "3"}, "runs must be a whole number from 1 to 1,000, got '3'"),
        ({"concurrency": 65}, "concurrency must be a whole number from 1 to 64, got 65"),
        ({"concurrency": 2.5}, "concurrency must be a whole number from 1 to 64, got 2.5"),
        (
            {"check_timeout": 0},
            r"check_timeout must be a number of seconds above 0 \(or None for no limit\), got 0$",
        ),
        ({"check_timeout": math.nan}, "check_timeout must be a number of seconds above 0"),
        ({"check_timeout": math.inf}, "check_timeout must be a number .*, got inf"),
        ({"check_timeout": True}, "check_timeout must be a number .*, got True"),
        ({"check_timeout": "60"}, "check_timeout must be a number .*, got '60'"),
        ({"check": 42}, r"check must be a function of a run \(see ctxlab\.fork\.Check\), got 42"),
        ({"prompt": 42}, "prompt must be the text of a message .*, got int"),
        ({"branches": "original"}, "run_forward takes branches made by ctxlab.fork, got str"),
        (
            {"branches": itertools.repeat(branch)},
            r"run_forward runs at most 1,000 branches \(MAX_RUNS runs in all\) in one call",
        ),
    ):
        arguments: dict[str, Any] = {"branches": branch, **given}
        with pytest.raises(ForkError, match=says):
            await run_forward(**arguments)
    assert sorted(p.name for p in branch.folder.iterdir()) == folders  # no run was made
    # At the bounds: accepted.
    done = await run_forward(branch, concurrency=MAX_CONCURRENCY, check_timeout=1e-3, max_steps=8)
    assert [r.run for r in done.runs] == [0]
