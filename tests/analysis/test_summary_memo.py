"""Offline summaries kept by what they summarize (`ctxlab.analysis._summary_memo`, issue 54): a
move that leaves a compaction's span and fields as they were writes no new summary, even when
the run is replayed (nothing kept, the step numbers shifted), a move that changes the span
writes one (the control), and the figures after any sequence of replayed moves are a replay's
from the start (a what-if of its own, its own memo), with a control that differs."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, WhatIf
from ctxlab.analysis._summary_memo import SummaryMemo, summary_key
from ctxlab.messages import Summary
from ctxlab.pipeline import SummaryRequest
from tests.analysis.test_resume import _same_run, _session
from tests.analysis.test_whatif_kept import _counted
from tests.analysis.whatif_figures import figures

WINDOW = 8_000
SESSION = _session(30, 20, 3)


async def _cold(config: ContextConfig) -> WhatIf:
    # Nothing kept by config: every move is replayed.
    what = WhatIf(SESSION, {"x": config}, context_window=WINDOW, counter=ApproximateCounter())
    what.kept.limit = 0
    await what.run()
    return what


async def test_a_move_keeping_the_span_makes_no_new_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _counted(monkeypatch)
    what = await _cold(ContextConfig(trigger_ratio=0.5))
    at = [s.index for s in what.runs["x"].prepared if s.compaction is not None]
    assert made[0] == 1 and at == [37]
    # 0.51 compacts at the same request with the same span: replayed (no run kept), the
    # summary taken as written.
    moved = await what.set_config("x", ContextConfig(trigger_ratio=0.51))
    assert [s.index for s in moved.prepared if s.compaction is not None] == at
    assert moved.reused < len(moved.prepared)  # replayed past the compaction, not taken whole
    assert made[0] == 1 and what.kept.summaries is not None and what.kept.summaries.taken == 1
    # The control: 0.52 compacts two requests later, another span: a new summary.
    later = await what.set_config("x", ContextConfig(trigger_ratio=0.52))
    assert [s.index for s in later.prepared if s.compaction is not None] == [39]
    assert made[0] == 2
    # And its figures are a replay's from the start.
    fresh = await _cold(ContextConfig(trigger_ratio=0.52))
    _same_run(later, fresh.runs["x"])
    assert figures(what) == figures(fresh)


@settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(moves=st.lists(st.sampled_from([0.45, 0.5, 0.51, 0.52, 0.55, 0.6]), min_size=2, max_size=5))
async def test_replayed_moves_show_the_replay_from_the_start(moves: list[float]) -> None:
    what = await _cold(ContextConfig(trigger_ratio=0.5))
    for trigger in moves:
        shown = await what.set_config("x", ContextConfig(trigger_ratio=trigger))
        fresh = await _cold(ContextConfig(trigger_ratio=trigger))
        _same_run(shown, fresh.runs["x"])
        assert figures(what) == figures(fresh)


async def test_the_control_a_summary_of_another_span_differs() -> None:
    one = await _cold(ContextConfig(trigger_ratio=0.51))
    other = await _cold(ContextConfig(trigger_ratio=0.52))
    with pytest.raises(AssertionError):
        _same_run(one.runs["x"], other.runs["x"])
    assert figures(one) != figures(other)


async def test_the_key_holds_what_the_summary_reads() -> None:
    base = SummaryRequest(
        messages=SESSION.messages[:5], previous_summary=None, schema={}, prompt="p", budget_tokens=9
    )
    key = summary_key(base)
    assert summary_key(dataclasses.replace(base)) == key
    for change in (
        {"messages": SESSION.messages[:6]},
        {"prompt": "q"},
        {"budget_tokens": 10},
        {"pinned_task": "t"},
        {"instructions": "i"},
        {"attempt": 2},
        {"schema": {"type": "object"}},
    ):
        assert summary_key(dataclasses.replace(base, **change)) != key, change
    # The summary carried forward, field by field (the extractive summary reads its fields
    # and its text); the same summary built again, its message read or not, is the same key.
    before = Summary(fields={"a": "1", "b": "2"}, text="t", task="k", compacted_messages=3)
    carried = dataclasses.replace(base, previous_summary=before)
    again = Summary(fields={"a": "1", "b": "2"}, text="t", task="k", compacted_messages=3)
    assert again.message.content[0].text == "t"  # its cached property read, not before's
    assert summary_key(dataclasses.replace(base, previous_summary=again)) == summary_key(carried)
    for other in (
        {"fields": {"a": "1", "b": "3"}},
        {"fields": {"a": "1"}},
        {"text": "u"},
        {"task": "j"},
        {"compacted_messages": 4},
        {"kind": "truncation"},
    ):
        changed = before.model_copy(update=other)
        assert summary_key(dataclasses.replace(base, previous_summary=changed)) not in (
            key,
            summary_key(carried),
        ), other
    written: list[SummaryRequest] = []

    async def write(request: SummaryRequest) -> dict[str, str]:
        written.append(request)
        return {"a": "b"}

    memo = SummaryMemo(limit=1)
    first = await memo.answer(base, write)
    first["a"] = "changed"  # the caller's copy: the memo keeps its own
    assert await memo.answer(base, write) == {"a": "b"} and len(written) == 1
    await memo.answer(dataclasses.replace(base, prompt="q"), write)  # past the limit: cleared
    assert await memo.answer(base, write) == {"a": "b"} and len(written) == 3
