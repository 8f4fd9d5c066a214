"""The what-if lab's slider with its neighbouring values replayed ahead: the status says what is
computed the moment the slider moves; a move to a value replayed ahead (or shown before) takes
its run without replaying; and whatever way a move was answered, what the widget shows — the
line, every cell of the table — is what a what-if replayed from the start under that config
shows."""

from __future__ import annotations

import asyncio

import pytest

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.analysis import _config_run
from tests.analysis.whatif_figures import logs_session
from tests.widgets.test_whatif_at_once import WINDOW, _fresh, _moved, _row

pytest.importorskip("ipywidgets")

from ctxlab.widgets import WhatIfLab
from ctxlab.widgets._whatif_ahead import NEAREST, neighbours, slider_value
from ctxlab.widgets._whatif_table import SHOWN_COLUMNS, _cell


def _tuned(trigger: float) -> ContextConfig:
    return ContextConfig.preset("ctxlab").model_copy(update={"trigger_ratio": trigger})


async def _lab() -> WhatIfLab:
    lab = await WhatIfLab.open(logs_session(), context_window=WINDOW, counter=ApproximateCounter())
    lab.config_picker.value = "ctxlab"
    return lab


async def _shows_the_replay_from_the_start(lab: WhatIfLab, trigger: float) -> None:
    fresh = await _fresh(_tuned(trigger))
    full = fresh.table()
    tokens = [m.estimated_input_tokens for m in fresh.runs["ctxlab"].manifests]
    assert list(lab.plot.trace("ctxlab")["y"]) == tokens
    row = _row(lab, "ctxlab")
    for column in SHOWN_COLUMNS:
        assert row[column] == _cell(full.loc["ctxlab", column]), (trigger, column)


async def test_the_status_says_what_is_computed_the_moment_the_slider_moves() -> None:
    lab = await _lab()
    lab.sliders["trigger_ratio"].value = 0.45
    # Before the event loop ran anything: no replay yet, the status already changed.
    assert lab.status.value == "ctxlab: computing trigger ratio 0.45, reserve ratio 0.1 …"
    assert lab.task is not None
    await lab.task
    assert lab.status.value.startswith("ctxlab: replayed ")


async def test_moves_back_and_forth_show_what_a_replay_from_the_start_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = [0]
    real = _config_run.extractive_summarizer

    async def counting(request):  # type: ignore[no-untyped-def]
        made[0] += 1
        return await real(request)

    monkeypatch.setattr(_config_run, "extractive_summarizer", counting)
    lab = await _lab()
    start = lab.what.runs["ctxlab"].config.trigger_ratio
    assert lab.runner.task is not None
    await lab.runner.task  # the user read: the neighbouring values are replayed ahead
    up = slider_value(start - 0.05)
    assert lab.what.kept_run("ctxlab", _tuned(up)) is not None
    # A move to a value replayed ahead: no summary written, the run taken as it was.
    before = made[0]
    await _moved(lab, up)
    assert made[0] == before
    assert "as replayed before (no replay)" in lab.status.value
    assert lab.task is not None
    await lab.task
    await _shows_the_replay_from_the_start(lab, up)
    # Back and forth, read or not in between, each shown as the replay from the start shows it.
    for trigger, wait in [(0.4, False), (start, False), (0.4, True), (0.5, False), (up, True)]:
        await _moved(lab, trigger)
        await lab.task
        if wait and lab.runner.task is not None:
            await lab.runner.task
        await _shows_the_replay_from_the_start(lab, trigger)
    assert lab.what.kept.taken >= 3


async def test_a_move_to_the_value_being_replayed_ahead_lets_it_finish() -> None:
    lab = await _lab()
    await _moved(lab, 0.4)
    await lab.task
    # The move comes while the value it asks for is still being replayed ahead (three steps
    # away: not among the values read ahead from 0.4).
    far = _tuned(0.55)
    assert lab.what.kept_run("ctxlab", far) is None
    runner = lab.runner
    runner.start("ctxlab", [far])
    await asyncio.sleep(0)  # the background task starts the replay
    assert runner._doing is not None and not runner._doing[1].done()
    job = runner._doing[1]
    await _moved(lab, 0.55)
    await lab.task
    assert job.done() and not job.cancelled()
    assert lab.what.runs["ctxlab"] is job.result()
    await _shows_the_replay_from_the_start(lab, 0.55)


async def test_a_move_elsewhere_cancels_what_runs_ahead() -> None:
    lab = await _lab()
    runner = lab.runner
    runner.start("ctxlab", [_tuned(0.6)])
    await asyncio.sleep(0)
    assert runner._doing is not None
    job = runner._doing[1]
    await _moved(lab, 0.4)
    await lab.task
    assert job.cancelled()
    assert lab.what.kept_run("ctxlab", _tuned(0.6)) is None  # a part of a replay is not kept


def test_the_neighbours_are_a_step_either_way_then_two_on_the_trigger() -> None:
    config = ContextConfig(trigger_ratio=0.7, reserve_ratio=0.1)
    moved = [(c.trigger_ratio, c.reserve_ratio) for c in neighbours(config)]
    assert moved == [(0.75, 0.1), (0.65, 0.1), (0.7, 0.11), (0.7, 0.09), (0.8, 0.1), (0.6, 0.1)]
    assert NEAREST == 2
    # Past the slider's end, or invalid (a trigger at the buffer ratio), never asked.
    edge = ContextConfig(trigger_ratio=0.9, reserve_ratio=0.5)
    assert all(c.trigger_ratio <= 0.9 and c.reserve_ratio <= 0.5 for c in neighbours(edge))
    assert slider_value(0.1 + 11 * 0.05) == 0.65
