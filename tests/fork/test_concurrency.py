"""Runs go forward side by side on the event loop, at most ``concurrency`` at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxlab.fork import fork, run_forward
from ctxlab.models import FunctionModel
from tests.fork.helpers import demo_session


@pytest.mark.parametrize("concurrency", [1, 2, 3])
async def test_at_most_concurrency_runs_are_in_flight(tmp_path: Path, concurrency: int) -> None:
    session = await demo_session(tmp_path)
    flying, most = [0], [0]

    async def answer(request: object, info: object) -> str:
        flying[0] += 1
        most[0] = max(most[0], flying[0])
        # A model's latency, long enough for the others to start: until as many runs as allowed
        # have been in flight once (a run's workspace is copied off the loop first, which on a
        # loaded machine can take longer than any fixed sleep), at most 10 s.
        for _ in range(200):
            if most[0] >= concurrency:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.01)
        flying[0] -= 1
        return "Done."

    branch = await fork(
        session.agent,
        at=6,
        model=lambda: FunctionModel(answer, context_window=8_000),
        root=tmp_path / "b",
    )
    outcomes = await run_forward(branch, prompt="Anything else?", runs=5, concurrency=concurrency)
    assert [r.reply for r in outcomes.runs] == ["Done."] * 5
    assert most[0] == concurrency  # never more, and as many as allowed
