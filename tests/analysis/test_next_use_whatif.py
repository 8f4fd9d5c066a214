"""Retention graded by what the recorded agent used next, in the what-if: the table's
``next_use_retention`` and ``next_use_floor``, `WhatIf.next_use`, and the controls on corpus
sessions (the full history scores 1, the latest message alone scores low)."""

from __future__ import annotations

import asyncio
import math

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf, sweep
from ctxlab.analysis._comparison import COMPARISON_COLUMNS
from ctxlab.analysis._grading import next_use_of
from ctxlab.analysis._replay import ReplayStep
from ctxlab.io._transcript import load_transcript
from ctxlab.messages import ToolUseBlock
from ctxlab.retention._measure import request_text
from ctxlab.retention._next_use import next_use, next_use_columns
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import bash_loop, replayed

PRESETS = ("ctxlab", "langchain", "observation_masking")


def _rereading_session(turns: int = 16) -> Transcript:
    """Each turn reads a new log and greps the log six turns back: the grep's path appeared
    before, the new log's path is fresh."""
    commands = [f"cat /var/log/app{n}.log" for n in range(turns)]
    for n in range(6, turns):
        commands[n] += f" && grep failed /var/log/app{n - 6}.log"
    calls = ((command, f"entry {n} ok\n" * 120) for n, command in enumerate(commands))
    return bash_loop(
        "reread", "Read every log.", calls, "All read.", system="You read logs.", meta={}
    )


def _whatif(transcript: Transcript, window: int, **keywords: object) -> WhatIf:
    configs = {p: ContextConfig.preset(p) for p in PRESETS}
    what = WhatIf(transcript, configs, context_window=window, **keywords)  # type: ignore[arg-type]
    asyncio.run(what.run())
    return what


def test_the_table_holds_each_configs_mean_share() -> None:
    what = _whatif(_rereading_session(), 4_000, counter=ApproximateCounter())
    table = what.table()
    rows = what.next_use()
    assert len(rows) > 0
    for name in PRESETS:
        mine = rows[rows.config == name]
        shares = [s for s in mine.share if s is not None and not math.isnan(s)]
        expected = sum(shares) / len(shares) if shares else math.nan
        got = table.loc[name, "next_use_retention"]
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)
        floors = [f for f in mine.floor if f is not None and not math.isnan(f)]
        if floors:
            assert table.loc[name, "next_use_floor"] == pytest.approx(sum(floors) / len(floors))


def _emptied(transcript: Transcript, config: ContextConfig) -> list[ReplayStep]:
    """A replay under ``config`` whose summaries say nothing (every field empty): the config
    that keeps nothing of what it compacts."""

    async def empty(request: object) -> dict[str, str]:
        return {name: "" for name in config.summary_schema["properties"]}

    async def steps() -> list[ReplayStep]:
        run = replayed(transcript, context_window=4_000, config=config, summarizer=empty)
        return [s async for s in run]

    return asyncio.run(steps())


def test_an_emptied_summary_loses_the_paths_it_compacted() -> None:
    transcript = _rereading_session()
    config = ContextConfig.preset("langchain")
    graded = next_use_of(_emptied(transcript, config), transcript.messages, transcript.system)
    assert graded and all(g.items for g in graded)
    for g in graded:
        # Independently: a path is lost exactly when the request's text does not contain it.
        step = next(s for s in _emptied(transcript, config) if s.number == g.step)
        text = " ".join(
            str(b.input) if isinstance(b, ToolUseBlock) else getattr(b, "text", "")
            for m in step.state.conversation
            for b in m.content
        )
        paths = [i for i in g.items if i.kind == "path"]
        assert [i for i in paths if i.text not in text] == [i for i in g.lost if i.kind == "path"]
    # The first compaction drops the reads of app3..app5 that the next replies grep: half of
    # its six items (five paths and ``grep failed``; the tail holds app6, app7 and the grep).
    assert [i.text for i in graded[0].lost] == [f"/var/log/app{n}.log" for n in (3, 4, 5)]
    assert graded[0].share == 0.5
    emptied = next_use_columns(graded)["next_use_retention"]
    what = _whatif(transcript, 4_000, counter=ApproximateCounter())
    kept = what.table().loc["langchain", "next_use_retention"]
    # The same config with its summary (ctxlab's handover names every file read) keeps them.
    assert kept == 1.0
    assert emptied is not None and emptied < 0.5


@requires_corpus
@pytest.mark.parametrize("window", [32_000, 16_000])
def test_controls_on_corpus_sessions(window: int) -> None:
    """At every compaction of the three presets: the full history (the session sent whole up
    to the request, as never compacting sends it) holds every graded item (share 1), and the
    latest message alone holds far less than the configs do."""
    files = [f for f in corpus_files() if f.name.startswith(("mini_swe_agent", "claude_code__4"))]
    shares, floors = [], []
    for path in files[:6]:
        transcript = load_transcript(path)
        what = _whatif(transcript, window)
        messages = transcript.messages
        for name in PRESETS:
            for graded in next_use_of(what.runs[name].prepared, messages, transcript.system):
                if not graded.items:
                    continue
                step = next(s for s in what.runs[name].prepared if s.number == graded.step)
                whole = request_text(messages[: step.index], transcript.system)
                full = next_use(messages, step.index, whole, system=transcript.system)
                assert full.share == 1.0
                shares.append(graded.share)
                floors.append(graded.floor)
    assert len(shares) >= 10
    mean_share, mean_floor = sum(shares) / len(shares), sum(floors) / len(floors)
    assert mean_floor < 0.35
    assert mean_share > mean_floor + 0.4


def test_the_sweep_and_the_lab_carry_the_tables_figures() -> None:
    transcript = _rereading_session()
    configs = {p: ContextConfig.preset(p) for p in PRESETS}
    frame = sweep([transcript], configs, [4_000], progress=False)
    what = _whatif(transcript, 4_000)
    table = what.table()
    for name in PRESETS:
        row = frame[frame.config == name].iloc[0]
        for column in ("next_use_retention", "next_use_floor"):
            assert row[column] == table.loc[name, column]
        assert row["compactions"] > 0 and row["next_use_retention"] == 1.0
    # The Lab's comparison table shows the comparison's columns (`SHOWN_COLUMNS`).
    assert {"next_use_retention", "next_use_floor"} <= set(COMPARISON_COLUMNS)
