"""The recording's clock where a user sees it: the transcript's HTML (one "clock" row) and the
``span_seconds`` column of `sessions`; ctxlab's own JSONL keeps it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from ctxlab import sessions
from ctxlab.io import load
from ctxlab.io._transcript import Transcript, clock_summary
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"
NOON = 1_770_897_600.0  # 2026-02-12 12:00:00 UTC


def _transcript(times: dict[int, float]) -> Transcript:
    messages = (
        UserMessage(content=(TextBlock(text="a"),)),
        AssistantMessage(content=(TextBlock(text="b"),)),
        UserMessage(content=(TextBlock(text="c"),)),
        AssistantMessage(content=(TextBlock(text="d"),)),
        UserMessage(content=(TextBlock(text="e"),)),
        AssistantMessage(content=(TextBlock(text="f"),)),
    )
    return Transcript(name="t", meta={}, system="", messages=messages, times=times)


def test_the_clock_row_says_the_earliest_and_latest_time_and_the_span() -> None:
    # Out of order on purpose: the row shows the earliest and the latest, never a negative span.
    transcript = _transcript({1: NOON + 5400, 5: NOON})
    assert clock_summary(transcript) == (
        "2026-02-12 12:00:00 UTC → 2026-02-12 13:30:00 UTC (1.5 h; 2 of 3 replies dated)"
    )
    html = transcript._repr_html_()
    assert ">clock</td>" in html
    assert "2026-02-12 13:30:00 UTC (1.5 h; 2 of 3 replies dated)" in html


def test_spans_are_said_in_the_unit_that_reads() -> None:
    for span, said in [(42, "42 s"), (600, "10.0 min"), (7200, "2.0 h"), (3 * 86400, "3.0 days")]:
        assert f"({said};" in clock_summary(_transcript({1: NOON, 3: NOON + span}))


def test_a_file_without_times_says_it_has_no_clock() -> None:
    transcript = load(FIXTURES / "codex_exec" / "exec-0.60.jsonl")
    assert clock_summary(transcript) == "no clock: the file records no times"
    assert "no clock: the file records no times" in transcript._repr_html_()


def test_sessions_lists_each_files_clock_span(tmp_path: Path) -> None:
    _transcript({1: NOON, 3: NOON + 90, 5: NOON + 1800}).save(tmp_path / "kept.jsonl")
    shutil.copy(FIXTURES / "codex_exec" / "exec-0.60.jsonl", tmp_path)
    frame = sessions(tmp_path, progress=False, workers=1)
    span = dict(zip(frame["path"].map(lambda p: Path(p).name), frame["span_seconds"], strict=True))
    assert span["kept.jsonl"] == 1800.0
    assert pd.isna(span["exec-0.60.jsonl"])  # no clock


def test_ctxlab_jsonl_keeps_the_clock_of_an_imported_session(tmp_path: Path) -> None:
    original = load(FIXTURES / "gemini" / "session-2025-10-11T13-00-2d9ea14f.json")
    again = load(original.save(tmp_path / "again.jsonl"))
    assert again.times == original.times
    assert len(again.times) == 13
