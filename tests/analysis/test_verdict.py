"""The plain sentence beside a what-if and a sweep: whether any config costs less than the
feasible baseline at a window — said when none does (the figures from the table itself), and
the other way round on a session where every config saves (the control)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

from ctxlab import ApproximateCounter, ContextConfig, sweep
from ctxlab.analysis import sweep_findings
from ctxlab.analysis._prices import PRICES
from ctxlab.analysis._verdict import BASELINE, baseline_verdict, say_pricing
from ctxlab.analysis._whatif import WhatIf
from ctxlab.io._transcript import Transcript
from ctxlab.messages import UserMessage
from tests.analysis.test_cost_as_sent import _session

CONFIGS = {n: ContextConfig.preset(n) for n in ("ctxlab", "agentscope", "langchain")}
BIG_TURNS = _session(12, [900], [1], "")  # every config dearer than dropping turns at 9k
SMALL_TURNS = _session(40, [60], [1], "")  # every config cheaper at 9k


async def test_when_no_config_beats_the_baseline_the_what_if_says_so() -> None:
    what = WhatIf(BIG_TURNS, CONFIGS, context_window=9_000, counter=ApproximateCounter())
    await what.run()
    table = what.table()
    ratios = table["cost_vs_baseline"]
    assert (ratios > 1).all()
    verdict = table.attrs["verdict"]
    assert verdict == what.verdict()
    assert verdict.startswith("With the window at 9,000 tokens, no config costs less than")
    assert f"{ratios.min():.2f}–{ratios.max():.2f}× as much" in verdict
    assert f"the cheapest, {ratios.idxmin()!r}" in verdict


async def test_when_configs_beat_it_the_sentence_says_how_many_control() -> None:
    what = WhatIf(SMALL_TURNS, CONFIGS, context_window=9_000, counter=ApproximateCounter())
    await what.run()
    table = what.table()
    assert (table["cost_vs_baseline"] < 1).all()
    assert "3 of 3 configs cost less than the feasible baseline" in table.attrs["verdict"]
    assert "no config" not in table.attrs["verdict"]


def test_the_sentence_for_ties_and_nothing_to_compare() -> None:
    assert "costs the same ($1.00)" in baseline_verdict(32_000, {"a": 1.0, "b": 1.2}, 1.0)
    assert "no config ran to the end" in baseline_verdict(8_000, {"a": float("nan")}, 1.0)
    assert "costs nothing" in baseline_verdict(8_000, {"a": 0.0}, 0.0)
    one = baseline_verdict(8_000, {"a": 1.5}, 1.0, sessions=1)
    assert one == (
        f"With the window at 8,000 tokens, over 1 session, no config costs less than {BASELINE}: "
        "they cost 1.50× as much (the cheapest, 'a', $1.50 against $1.00)."
    )
    two = baseline_verdict(8_000, {"a": 1.5, "b": 2.25}, 1.0)
    assert "they cost 1.50–2.25× as much" in two


def test_a_sweep_says_it_per_window() -> None:
    # A sweep counts with the default (exact) counter: the summarizing configs stay dearer.
    summarizing = {n: CONFIGS[n] for n in ("ctxlab", "langchain")}
    frame = sweep([BIG_TURNS], summarizing, windows=(9_000, 200_000), progress=False)
    findings = frame.attrs["findings"]
    assert findings == sweep_findings(frame)
    assert len(findings) == 2
    assert "9,000 tokens, over 1 session, no config costs less" in findings[0]
    assert "200,000 tokens, over 1 session, no config costs less" in findings[1]
    assert "costs the same" in findings[1]  # nothing compacts in 200k: the same requests
    cheaper = sweep([SMALL_TURNS], summarizing, windows=(9_000,), progress=False)
    assert "2 of 2 configs cost less" in cheaper.attrs["findings"][0]
    # Two sessions: the sums over both, so one session's saving can outweigh the other's.
    both = sweep(
        [BIG_TURNS, dataclasses.replace(SMALL_TURNS, name="small")],
        summarizing,
        windows=(9_000,),
        progress=False,
    )
    (finding,) = both.attrs["findings"]
    assert "over 2 sessions" in finding


def test_the_command_line_sweep_prints_the_findings() -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxlab",
            "sweep",
            str(fixture),
            "--preset",
            "ctxlab",
            "--preset",
            "agentscope",
            "--window",
            "8000",
            "--window",
            "32000",
            "--workers",
            "0",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # At 8k the recording's unrecorded part (its System prompt and tools, sized from its bill)
    # alone fills the window: no config runs, and the finding says so rather than nothing.
    assert (
        "With the window at 8,000 tokens, over 1 session, no config ran to the end" in done.stderr
    )
    assert (
        "With the window at 32,000 tokens, over 1 session, 1 of 2 configs cost less" in done.stderr
    )


def _row(
    session: str, config: str, cost: float, ratio: float, error: object = None, window: int = 9_000
) -> dict:
    return {
        "session": session,
        "config": config,
        "window": window,
        "cost": cost,
        "cost_vs_baseline": ratio,
        "error": error,
    }


def test_a_sweeps_sums_are_over_the_sessions_every_config_finished() -> None:
    import pandas as pd

    # Session "b" failed under config "y": both configs are summed over "a" alone — never y's
    # one session against x's two. Baselines: a $2.00 (x 1.00 = 0.5×), b $10.00.
    frame = pd.DataFrame(
        [
            _row("a", "x", 1.0, 0.5),
            _row("a", "y", 3.0, 1.5),
            _row("b", "x", 5.0, 0.5),
            _row("b", "y", float("nan"), float("nan"), "ContextBudgetExceeded: too large"),
        ]
    )
    (finding,) = sweep_findings(frame)
    assert finding == (
        "With the window at 9,000 tokens, over 1 session, 1 of 2 configs cost less than "
        "the feasible baseline (no summary, the oldest turns dropped to fit); the cheapest, "
        "'x', 0.50× its cost ($1.00 against $2.00)."
    )
    # The control: when "b" finished under both, both sessions count.
    fixed = frame.copy()
    fixed.loc[3, ["cost", "cost_vs_baseline", "error"]] = [15.0, 1.5, None]
    (finding,) = sweep_findings(fixed)
    assert "over 2 sessions" in finding and "($6.00 against $12.00)" in finding


def test_an_error_row_is_not_summed_even_with_figures() -> None:
    import pandas as pd

    # A row that failed part-way keeps the figures of what ran; the sums leave it out.
    frame = pd.DataFrame(
        [
            _row("a", "x", 1.0, 0.5),
            _row("a", "y", 3.0, 1.5),
            _row("b", "x", 5.0, 0.5),
            _row("b", "y", 0.1, 0.01, "ContextBudgetExceeded: failed at request 3"),
        ]
    )
    (finding,) = sweep_findings(frame)
    assert "over 1 session" in finding and "($1.00 against $2.00)" in finding


def test_a_window_where_no_session_ran_under_every_config_says_so_and_the_next_is_judged() -> None:
    import pandas as pd

    failed = "ContextBudgetExceeded: the unrecorded part alone fills the window"
    frame = pd.DataFrame(
        [
            _row("a", "x", math.nan, math.nan, failed, window=8_000),
            _row("b", "y", math.nan, math.nan, failed, window=8_000),
            _row("a", "x", 1.0, 0.5),
            _row("a", "y", 3.0, 1.5),
        ]
    )
    assert sweep_findings(frame) == [
        f"With the window at 8,000 tokens, over 2 sessions, no config ran to the end: nothing to "
        f"compare with {BASELINE}.",
        "With the window at 9,000 tokens, over 1 session, 1 of 2 configs cost less than "
        f"{BASELINE}; the cheapest, 'x', 0.50× its cost ($1.00 against $2.00).",
    ]


def test_a_row_whose_baseline_cannot_be_read_back_is_not_summed() -> None:
    import pandas as pd

    # Session b's x cost $0 at a ratio of 0: its baseline (cost ÷ ratio) cannot be read back,
    # so b is not a session every config finished: the sums are over a alone.
    frame = pd.DataFrame(
        [
            _row("a", "x", 1.0, 0.5),
            _row("a", "y", 3.0, 1.5),
            _row("b", "x", 0.0, 0.0),
            _row("b", "y", 4.0, 2.0),
        ]
    )
    (finding,) = sweep_findings(frame)
    assert "over 1 session" in finding and "($1.00 against $2.00)" in finding


def test_a_frame_without_an_error_column_or_a_baseline_ratio() -> None:
    import pandas as pd

    rows = [_row("a", "x", 1.0, 0.5), _row("a", "y", 3.0, 1.5)]
    (finding,) = sweep_findings(pd.DataFrame(rows).drop(columns="error"))
    assert finding.endswith("the cheapest, 'x', 0.50× its cost ($1.00 against $2.00).")
    assert sweep_findings(pd.DataFrame(rows).drop(columns="cost_vs_baseline")) == []


def _recorded(name: str, **meta: object) -> Transcript:
    return Transcript(name, meta, "", (UserMessage(content="Fix the bug."),))


def test_a_sweep_names_each_sessions_price_on_its_day_with_its_providers_cache() -> None:
    import pandas as pd

    sessions = {
        # o3 cost $10 / $40 from its launch until 2025-06-10 ($2 / $8 since).
        "early": _recorded("early", models=["o3"], startTime="2025-05-01T10:00:00Z"),
        "dated": _recorded("dated", models=["claude-sonnet-4-6-20260101"]),
        "gemini": _recorded("gemini", models=["gemini-2.5-pro"]),
        "mine": _recorded("mine", models=["my-llm"]),
        "theirs": _recorded("theirs", models=["their-llm"]),
    }
    frame = pd.DataFrame()
    frame.attrs["findings"] = []
    say_pricing(frame, sessions, None, None)
    said = frame.attrs["pricing"]
    assert said["early"].startswith("o3 at OpenAI's list price: $10 input, $40 output")
    assert said["dated"].startswith(
        "claude-sonnet-4-6-20260101 priced as claude-sonnet-4-6 at Anthropic's list price: $3"
    )
    assert said["gemini"].endswith(
        "; Google's implicit cache (from 2,048 tokens, reads at the cached price, no write or "
        "storage charge)"
    )
    assert frame.attrs["findings"] == [
        "2 of 5 sessions are unpriced, their costs NaN and left out of the comparisons: mine: "
        "unpriced (model 'my-llm' has no known price); theirs: unpriced (model 'their-llm' has "
        "no known price)"
    ]
    # A price passed for the sweep prices an unknown model, with its provider's cache rules.
    passed = pd.DataFrame()
    passed.attrs["findings"] = []
    say_pricing(passed, {"mine": sessions["mine"]}, PRICES["gemini-2.5-pro"], None)
    assert passed.attrs["pricing"]["mine"].startswith("my-llm priced as gemini-2.5-pro at")
    assert passed.attrs["pricing"]["mine"].endswith(
        "; Google's implicit cache (from 1,024 tokens, reads at the cached price, no write or "
        "storage charge)"
    )
    assert passed.attrs["findings"] == []
