"""`follow(interval=)` refuses what cannot be a pause between polls — NaN (never polls),
infinity (polls once), 0 or less (polls without pause), text — with a `UsageError`, before the
file is read or anything is started."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from ctxlab import follow
from ctxlab.exceptions import UsageError
from ctxlab.sources._follow import FollowedSession
from tests.hostile import says

SESSION = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.mark.parametrize("interval", [math.nan, math.inf, -1, 0, "0.5", None, True])
async def test_an_interval_that_is_no_pause_is_refused_before_anything_starts(
    interval: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "not-yet.jsonl"  # had it been read first, the error would be another
    tasks = len(asyncio.all_tasks())
    with pytest.raises(UsageError) as caught:
        await follow(missing, context_window=200_000, interval=interval)
    says(str(caught.value), "interval must be a positive, finite number of seconds", repr(interval))
    assert len(asyncio.all_tasks()) == tasks  # nothing polls in the background
    session = FollowedSession(SESSION, context_window=200_000)
    with pytest.raises(UsageError):
        session.start(interval)
    assert session._task is None


async def test_a_real_interval_follows() -> None:
    session = await follow(SESSION, context_window=200_000, interval=0.05)
    try:
        assert session._task is not None and not session._task.done()
        assert len(session.manifests) > 0
    finally:
        await session.stop()
