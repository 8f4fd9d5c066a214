"""Next-use grades pinned (issue 54): the linear grader, which keeps the recording's text and
what each compaction is graded on across configs, gives every grade the quadratic one gave
(``tests/fixtures/next_use_figures.json``, `tests.analysis.next_use_pinned`), with a control —
the same cases graded against the whole recording's text differ — and it grades each position
of the recording once, whatever the number of configs compacting there."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import ctxlab.retention._next_use as next_use_module
from ctxlab import ContextConfig, WhatIf
from ctxlab.analysis._grading import next_use_of
from ctxlab.retention import _before
from tests.analysis.next_use_pinned import FIXTURE, compute
from tests.analysis.whatif_figures import logs_session
from tests.conftest import corpus_files


def _pinned(corpus: bool) -> dict[str, Any]:
    pinned = json.loads(FIXTURE.read_text())
    return {k: v for k, v in pinned.items() if corpus or ("@" in k and k.split("@")[0] in _OWN)}


_OWN = ("logs", "claude_code_fixture")


def test_every_grade_equals_the_pinned_one() -> None:
    corpus = bool(corpus_files())
    got = asyncio.run(compute(corpus=corpus))
    assert got == _pinned(corpus)
    # The pins grade compactions (the cases were chosen to compact): not a pin of nothing.
    assert (
        sum(int(d.split(":")[0]) for case in got.values() for d in case.values()) > 50 or not corpus
    )


def test_the_control_graded_against_the_whole_recording_differs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if every prefix were the whole recording: what a reply introduces counts as seen.
    monkeypatch.setattr(_before, "_within", lambda end, limit: end is not None)
    _before._kept.clear()
    try:
        got = asyncio.run(compute(corpus=False))
    finally:
        _before._kept.clear()
    pinned = _pinned(False)
    assert got["logs@8000"] != pinned["logs@8000"]


def test_each_position_is_graded_once_across_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int | None]] = []
    real = next_use_module.grounds

    def counting(text: Any, index: int, end: int | None, replies: int) -> Any:
        calls.append((index, end))
        return real(text, index, end, replies)

    monkeypatch.setattr(next_use_module, "grounds", counting)
    built: list[int] = []
    make = _before.RecordingText.__init__

    def building(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        make(self, *args, **kwargs)

    monkeypatch.setattr(_before.RecordingText, "__init__", building)
    _before._kept.clear()
    transcript = logs_session()
    ctxlab = ContextConfig.preset("ctxlab")
    # The same config under two names (a kept run's figures would not be asked again: these
    # are two runs), and a third compacting elsewhere.
    configs = {"a": ctxlab, "b": ctxlab, "c": ctxlab.model_copy(update={"trigger_ratio": 0.6})}
    what = WhatIf(transcript, configs, context_window=8_000)
    asyncio.run(what.run())
    grades = {
        name: next_use_of(run.prepared, transcript.messages, transcript.system)
        for name, run in what.runs.items()
    }
    asked = [
        (s.index, ends[n + 1] if n + 1 < len(ends) else None)
        for run in what.runs.values()
        for ends in [[s.index for s in run.prepared if s.compaction is not None]]
        for n, s in enumerate(s for s in run.prepared if s.compaction is not None)
    ]
    # Three compactions each for "a" and "b", four for "c" at other requests.
    assert (len(asked), len(set(asked))) == (10, 7)
    assert sorted(calls) == sorted(set(asked))  # each position graded once
    assert built == [1]  # the recording's text built once for every config
    assert grades["a"] == grades["b"] and grades["a"] != grades["c"]
