"""`make bench`'s table (benchmarks/bench_table.py): the figures it keeps from each script's
output are the lines that state a ratio and the rows of a table whose header does — and
nothing else; a failed script is said, with the load beside every step."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_table.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_table", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_table"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


OUTPUT = """\
1,000 files (652 MB), median of 1 cold runs each, interleaved; load 3.1–4.0 (1-minute average)
contender                           seconds   CPU s  files/s   MB/s ÷ load()  ÷ floor ÷ target
sessions(folder)                      61.20   98.10       16   10.7     1.20     9.10    12.24
JSON decode of each file (floor)       6.73    6.51      149   96.9     0.13     1.00     1.35

reading 40 transcripts
500 requests at 32,000 tokens: lines and headline 120 ms (target 150 ms: 0.80x) (CPU 90 ms)
    lines [118, 122] baseline [900, 950]
steps reused [3, 3]
ctxlab ÷ batch floor 1.21 (within 1.5× on 38 of 40 sessions)
"""


def test_the_figures_are_the_ratio_lines_and_the_rows_under_a_ratio_header() -> None:
    figures = _module().figures_of(OUTPUT.splitlines())
    assert figures == [
        "contender                           seconds   CPU s  files/s   MB/s ÷ load()  ÷ floor ÷ target",
        "sessions(folder)                      61.20   98.10       16   10.7     1.20     9.10    12.24",
        "JSON decode of each file (floor)       6.73    6.51      149   96.9     0.13     1.00     1.35",
        "500 requests at 32,000 tokens: lines and headline 120 ms (target 150 ms: 0.80x) (CPU 90 ms)",
        "ctxlab ÷ batch floor 1.21 (within 1.5× on 38 of 40 sessions)",
    ]


def test_the_table_says_each_steps_load_times_and_a_failure() -> None:
    module = _module()
    done = module.Step("sessions", ["sessions_bench.py"], 3.1, 4.0, 61.0, 98.0, 0, ["a ÷ b 1.2"])
    failed = module.Step("lab-open", ["lab_bench.py", "--open", "5000"], 2.0, 2.5, 3.0, 2.0, 1)
    text = module.table([done, failed])
    assert "## sessions_bench.py — load 3.1 → 4.0, 61 s wall, 98 s CPU, ok\n  a ÷ b 1.2" in text
    assert (
        "## lab_bench.py --open 5000 — load 2.0 → 2.5, 3 s wall, 2 s CPU, FAILED (exit 1)\n"
        "  (no ratio in its output)"
    ) in text
    assert text.startswith("# make bench, ") and "ratios compare within this table only" in text


def test_make_bench_runs_issue_54s_figures_the_quick_size_and_the_earlier_ones_on_demand() -> None:
    module = _module()
    full = {s.name: s.command for s in module.chosen()}
    assert list(full) == ["replay-user", "whatif-slider", "lab-open", "sessions"]
    assert full["whatif-slider"] == ["whatif_slider_bench.py", "--cold"]  # 500 and 5,000
    quick = {s.name: s.command for s in module.chosen(quick=True)}
    assert quick["sessions"] == ["sessions_bench.py", "--files", "200", "--repeat", "1"]
    assert quick["whatif-slider"][:3] == ["whatif_slider_bench.py", "--steps", "500"]
    every = [s.name for s in module.chosen(every=True)]
    assert every[:4] == list(full) and "compaction" in every and "scale" in every
    assert [s.name for s in module.chosen(only=["lab-open", "prepare"])] == ["lab-open", "prepare"]


def test_a_step_past_the_timeout_is_stopped_and_said(tmp_path: Path) -> None:
    module = _module()
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('a ÷ b 1.5', flush=True)\ntime.sleep(60)\n")
    step = module.Step("slow", [str(script)])
    module.run(step, [], timeout=1.0)
    assert step.timed_out and step.wall < 30
    assert step.figures == ["a ÷ b 1.5"]  # what it printed before is kept
    assert "STOPPED at the timeout" in module.table([step])
    done = module.Step("done", ["x.py"])
    assert module.exit_status([done]) == 0
    assert module.exit_status([done, step]) == 1  # stopped by SIGTERM: status -15, still a failure
