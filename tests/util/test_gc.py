"""The collector held off while a what-if replays (`ctxlab.util._gc`), and given back after."""

from __future__ import annotations

import gc

import pytest

import ctxlab.analysis._config_run as config_run
from ctxlab import ContextConfig, Transcript, WhatIf
from ctxlab.util._gc import collector_paused
from tests.helpers import session


def test_the_collector_is_off_inside_and_on_again_after_even_on_an_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    # The user's (or an outer caller's) choice is theirs: the block does not turn it on.
    gc.disable()
    try:
        with collector_paused():
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_a_what_if_replays_with_the_collector_off_and_leaves_it_on(monkeypatch) -> None:
    seen: list[bool] = []
    calls: list[bool] = []
    transcript = Transcript("s", {}, "", tuple(session(24, output_chars=1_500)))
    what = WhatIf(transcript, {"c": ContextConfig()}, context_window=4_000, summary_calls=False)
    real, original = WhatIf._replay, config_run.extractive_summarizer

    async def watched(self, run, earlier=None):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        await real(self, run, earlier)
        seen.append(gc.isenabled())

    async def summarizer(request):  # type: ignore[no-untyped-def]
        calls.append(gc.isenabled())
        return await original(request)

    monkeypatch.setattr(config_run, "extractive_summarizer", summarizer)
    monkeypatch.setattr(WhatIf, "_replay", watched)
    await what.run()
    await what.set_config("c", ContextConfig(trigger_ratio=0.6))
    assert calls and not any(calls)  # every summary written during the replay: collector off
    assert seen == [True, True, True, True]  # on before and after each replay
    assert gc.isenabled()
