"""The workspace tools' ``grep`` (the tools the forks how-to gives a branch over the user's own
project) runs the model's pattern under a time limit, off the event loop (issue 51: ``(a+)+$``
over thirty ``a`` and a ``!`` never answered, and held the interpreter while it tried); ordinary
patterns still find exactly the lines Python's ``re`` finds."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlab.demo import prepare_workspace, workspace_tools
from ctxlab.exceptions import UsageError

ROOT = Path(__file__).resolve().parents[2]
BACKTRACKS = "a" * 25 + "!\n"
"""A line the patterns below take 10-30 s over without a limit (2 to the 25th ways to split
it): a test whose limit is lost fails in seconds, never hangs."""
CHILD = """
import asyncio, sys, time
from ctxlab.demo import workspace_tools
grep = next(t for t in workspace_tools(sys.argv[1]) if t.name == "grep")
started = time.perf_counter()
result = asyncio.run(grep.run("g", {"pattern": sys.argv[2]}))
print(f"{time.perf_counter() - started:.3f}", bool(result.is_error), result.text, sep="\\n")
"""


def _grep(root: Path, pattern: str, path: str = ".", **limits: float) -> tuple[bool, str]:
    grep = next(t for t in workspace_tools(root, **limits) if t.name == "grep")
    result = asyncio.run(grep.run("g", {"pattern": pattern, "path": path}))
    return bool(result.is_error), result.text


def test_the_issues_pattern_is_answered_in_seconds(tmp_path: Path) -> None:
    # In a process of its own: under `re` the search never ends and holds the interpreter, so
    # nothing in this process could stop it.
    (tmp_path / "notes.txt").write_text("a" * 30 + "!\n" + "a" * 12 + "\n", encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp_path), "(a+)+$"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("grep '(a+)+$' over 30 'a' and a '!' did not answer in 60 s")
    seconds, is_error, text = done.stdout.split("\n", 2)
    assert float(seconds) < 5.0
    # The right answer: the line of 'a' alone matches, the one ended by '!' does not.
    assert (is_error, text.strip()) == ("False", "notes.txt:2: " + "a" * 12)


@pytest.mark.parametrize("pattern", [r"(a|a)*$", r"(?:a|a)+b", r"(\w|\w)*\d"])
def test_a_pattern_over_the_time_limit_is_an_error_the_model_reads(
    tmp_path: Path, pattern: str
) -> None:
    (tmp_path / "notes.txt").write_text("ok\n" + BACKTRACKS, encoding="utf-8")
    started = time.perf_counter()
    is_error, text = _grep(tmp_path, pattern, grep_timeout=0.3)
    assert time.perf_counter() - started < 10  # 0.3 s of the processor; a busy machine
    assert is_error
    assert f"the pattern {pattern!r} took longer than 0.3 s" in text
    assert "simplify it" in text


def test_the_limit_is_the_whole_searchs_not_each_lines(tmp_path: Path) -> None:
    # Forty lines, each some 20-50 ms of backtracking (under the limit), over two files: the
    # search as a whole passes it.
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(("a" * 17 + "!\n") * 20, encoding="utf-8")
    is_error, text = _grep(tmp_path, "(a|a)*$", grep_timeout=0.3)
    assert is_error and "took longer than 0.3 s" in text


def test_the_event_loop_runs_while_a_pattern_backtracks(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(BACKTRACKS, encoding="utf-8")
    grep = next(t for t in workspace_tools(tmp_path, grep_timeout=1.0) if t.name == "grep")

    async def main() -> tuple[int, bool]:
        ticks = 0
        task = asyncio.create_task(grep.run("g", {"pattern": "(a|a)*$"}))
        while not task.done():
            await asyncio.sleep(0.01)
            ticks += 1
        return ticks, bool(task.result().is_error)

    ticks, is_error = asyncio.run(main())
    # One second of backtracking at 10 ms a tick: the loop ran beside it (a busy machine runs
    # fewer ticks; none at all when the search holds the interpreter).
    assert is_error and ticks >= 10, ticks


def test_a_branchs_grep_keeps_the_limit(tmp_path: Path) -> None:
    origin, copy = tmp_path / "origin", tmp_path / "copy"
    for folder in (origin, copy):
        folder.mkdir()
        (folder / "notes.txt").write_text(BACKTRACKS, encoding="utf-8")
    grep = next(t for t in workspace_tools(origin, grep_timeout=0.2) if t.name == "grep")
    assert grep.for_workspace is not None
    result = asyncio.run(grep.for_workspace(copy).run("g", {"pattern": "(a|a)*$"}))
    assert result.is_error and "took longer than 0.2 s" in result.text


SKIPPED = {".git", "__pycache__", ".venv", "context_offload", "large_tool_results", ".ctxlab-demo"}
"""The folders the tools never read."""
ORDINARY = [
    r"def \w+\(",
    r"round_half_up",
    r"(?i)DECIMAL",
    r"^import",
    r"\d{2,}",
    r"cents|percent",
    r"^\s+return ",
]


@pytest.mark.parametrize("pattern", ORDINARY)
def test_ordinary_patterns_find_the_lines_re_finds(tmp_path: Path, pattern: str) -> None:
    root = prepare_workspace(tmp_path / "demo")
    expected = []
    compiled = re.compile(pattern)
    for file in sorted(root.rglob("*")):
        if file.is_file() and not SKIPPED & set(file.relative_to(root).parts):
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except UnicodeDecodeError:
                continue
            expected += [
                f"{file.relative_to(root)}:{n}: {line}"
                for n, line in enumerate(lines, start=1)
                if compiled.search(line)
            ]
    is_error, text = _grep(root, pattern)
    assert not is_error
    assert expected, "a pattern that finds nothing tests nothing"
    assert text.split("\n") == expected


def test_a_pattern_that_is_not_one_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n", encoding="utf-8")
    is_error, text = _grep(tmp_path, "(unclosed")
    assert is_error
    assert "'(unclosed' is not a regular expression" in text
    assert "missing )" in text


@pytest.mark.parametrize("limit", [0, -1.0, float("nan"), float("inf"), "2"])
def test_a_time_limit_that_is_not_one_is_refused(tmp_path: Path, limit: object) -> None:
    with pytest.raises(UsageError, match="grep_timeout"):
        workspace_tools(tmp_path, grep_timeout=limit)  # type: ignore[arg-type]
