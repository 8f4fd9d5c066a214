"""Runs kept by their config (`ctxlab.analysis._whatif_kept`): a slider moved back and forth,
with configs computed ahead in between, shows what a replay from the start shows — every
request, compaction, state, summary call and figure — and a move to a config replayed before or
computed ahead makes no new summary."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, WhatIf
from ctxlab.analysis import _config_run
from ctxlab.analysis._whatif_kept import KeptRuns
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from tests.analysis.test_resume import _same_run, _session
from tests.analysis.whatif_figures import figures

WINDOW = 8_000
SESSION = _session(30, 20, 3)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the summaries the what-if's replays write (the offline extract it calls)."""
    made = [0]

    async def counting(request: SummaryRequest) -> Mapping[str, Any]:
        made[0] += 1
        return await extractive_summarizer(request)

    monkeypatch.setattr(_config_run, "extractive_summarizer", counting)
    return made


async def _fresh(config: ContextConfig, cache: Any) -> WhatIf:
    what = WhatIf(SESSION, {"x": config}, context_window=WINDOW, counter=cache)
    await what.run()
    return what


_moves = st.lists(
    st.tuples(
        st.sampled_from([0.4, 0.45, 0.5, 0.55, 0.6, 0.8]),
        st.sampled_from([0.05, 0.1, 0.2]),
        st.booleans(),
    ),
    min_size=2,
    max_size=6,
)


@settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(moves=_moves)
async def test_moves_back_and_forth_show_the_replay_from_the_start(
    moves: list[tuple[float, float, bool]],
) -> None:
    what = WhatIf(
        SESSION,
        {"x": ContextConfig(trigger_ratio=0.5)},
        context_window=WINDOW,
        counter=ApproximateCounter(),
    )
    await what.run()
    for trigger, reserve, ahead in moves:
        config = ContextConfig(trigger_ratio=trigger, reserve_ratio=reserve)
        if ahead:
            # Computed ahead of the move, from the config shown now (its steps reused).
            await what.ahead("x", config)
        shown = await what.set_config("x", config)
        fresh = await _fresh(config, what.cache)
        _same_run(shown, fresh.runs["x"])
        assert figures(what) == figures(fresh)


async def test_the_comparison_tells_two_configs_apart() -> None:
    # The control: the exactness test's comparison fails on a run of another config.
    what = await _fresh(ContextConfig(trigger_ratio=0.4), ApproximateCounter())
    other = await _fresh(ContextConfig(trigger_ratio=0.6), what.cache)
    with pytest.raises(AssertionError):
        _same_run(what.runs["x"], other.runs["x"])
    assert figures(what) != figures(other)


async def test_a_move_back_or_ahead_makes_no_new_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _counted(monkeypatch)
    first = ContextConfig(trigger_ratio=0.5)
    what = WhatIf(SESSION, {"x": first}, context_window=WINDOW, counter=ApproximateCounter())
    await what.run()
    at_first = made[0]
    assert at_first > 0, "no compaction: the test would be vacuous"
    moved = await what.set_config("x", ContextConfig(trigger_ratio=0.6))
    after_move = made[0]
    assert after_move > at_first  # the control: a new trigger summarizes again
    back = await what.set_config("x", ContextConfig(trigger_ratio=0.5))
    assert made[0] == after_move  # back: taken as replayed, no summary written
    assert back.config.trigger_ratio == 0.5 and what.kept.taken == 1
    ahead = await what.ahead("x", ContextConfig(trigger_ratio=0.45))
    assert ahead is not None and made[0] > after_move
    computed = made[0]
    taken = await what.set_config("x", ContextConfig(trigger_ratio=0.45))
    assert taken is ahead and made[0] == computed
    assert what.runs["x"] is ahead and moved is not taken


async def test_a_cancelled_run_ahead_keeps_nothing() -> None:
    what = await _fresh(ContextConfig(trigger_ratio=0.5), ApproximateCounter())
    config = ContextConfig(trigger_ratio=0.4)
    task = asyncio.ensure_future(what.ahead("x", config))
    for _ in range(5):
        await asyncio.sleep(0)  # a few requests replayed, then a move takes over
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert what.kept_run("x", config) is None
    shown = await what.set_config("x", config)
    _same_run(shown, (await _fresh(config, what.cache)).runs["x"])


async def test_a_summarizer_model_is_never_run_ahead_nor_taken_from_before() -> None:
    from ctxlab.models import ScriptedModel

    model = ScriptedModel([])
    config = ContextConfig(trigger_ratio=0.9)
    what = WhatIf(
        SESSION,
        {"x": config},
        context_window=WINDOW,
        counter=ApproximateCounter(),
        summarizer=model,
    )
    assert await what.ahead("x", ContextConfig(trigger_ratio=0.85)) is None
    assert what.kept_run("x", config) is None


def test_kept_runs_drop_the_least_recently_used() -> None:
    kept = KeptRuns(limit=2)
    runs = [_config_run.ConfigRun("x", ContextConfig(trigger_ratio=r)) for r in (0.4, 0.5, 0.6)]
    kept.keep(runs[0])
    kept.keep(runs[1])
    assert kept.get("x", ContextConfig(trigger_ratio=0.4)) is runs[0]  # used: kept longer
    kept.keep(runs[2])
    assert len(kept) == 2
    assert kept.get("x", ContextConfig(trigger_ratio=0.5)) is None
    assert kept.get("x", ContextConfig(trigger_ratio=0.4)) is runs[0]
    # Kept by every field and the name: another field or name is another run.
    assert kept.get("y", ContextConfig(trigger_ratio=0.4)) is None
    assert kept.get("x", ContextConfig(trigger_ratio=0.4, tool_result_limit=500)) is None


async def test_next_use_is_graded_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The table asks for every run's next-use figures at each redraw: only a run replayed since
    # is graded again (the figures unchanged).
    graded: list[int] = []
    real = _config_run.next_use_of

    def counting(steps: Any, *args: Any, **kwargs: Any) -> Any:
        graded.append(len(steps))
        return real(steps, *args, **kwargs)

    monkeypatch.setattr(_config_run, "next_use_of", counting)
    what = WhatIf(
        SESSION,
        {"x": ContextConfig(trigger_ratio=0.5), "y": ContextConfig(trigger_ratio=0.7)},
        context_window=WINDOW,
        counter=ApproximateCounter(),
    )
    await what.run()
    first = what.table()
    assert len(graded) == 2
    assert what.table()[["next_use_retention", "next_use_floor"]].equals(
        first[["next_use_retention", "next_use_floor"]]
    )
    assert len(graded) == 2
    await what.set_config("x", ContextConfig(trigger_ratio=0.4))
    what.table()
    assert len(graded) == 3  # the moved run alone
