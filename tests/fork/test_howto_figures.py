"""docs/howto/forks.md's figures are what its example gives: the page's own code blocks (the
session, the fork, the run forward) are run as written, and every figure of its table and its
prose — passes, steps, costs to the page's rounding, where contexts part, how many times the
cost, how many requests later — must equal what the runs give. A change that moves one fails
here, never silently on the page."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

PAGE = Path(__file__).parents[2] / "docs" / "howto" / "forks.md"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _example(page: str) -> list[str]:
    """The page's Python blocks before its Lab section: the example's code, in order."""
    runnable = page.split("## In the Lab")[0]
    return re.findall(r"```python\n(.*?)```", runnable, flags=re.S)


async def _run(blocks: list[str]) -> dict[str, Any]:
    """The blocks run as a notebook would (top-level await), in one namespace."""
    space: dict[str, Any] = {}
    for block in blocks:
        code = compile(block, str(PAGE), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        done = eval(code, space)  # the page's own code, as a reader runs it
        if done is not None:
            await done
    return space


def _table(page: str) -> dict[str, dict[str, str]]:
    """The page's outcome table: its rows by branch, cells as written."""
    section = page.split("## Run forward")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    return {row[0]: dict(zip(head, row, strict=True)) for row in rows}


def _cells(row: pd.Series) -> dict[str, str]:
    """A summary row written as the page writes it."""
    steps = f"{row['steps']:g}" + (" (stopped)" if row["errors"] else "")
    parts = "–" if pd.isna(row["diverges_at"]) else str(int(row["diverges_at"]))
    return {
        "branch": str(row["branch"]),
        "passed": f"{row['passed']} / {row['runs']}",
        "steps": steps,
        "cost (USD)": f"{row['cost']:.3f}",
        "diverges_at": parts,
    }


async def test_the_forks_howto_figures_are_what_its_example_gives() -> None:
    page = PAGE.read_text()
    flat = " ".join(page.split())
    space = await _run(_example(page))
    summary = space["outcomes"].summary().set_index("branch", drop=False)
    # The session's comment: how many requests it made.
    made = re.search(r"# (\w+) requests:", page)
    assert made is not None and WORDS[made.group(1)] == len(space["agent"].manifests)
    table = _table(page)
    assert list(table) == list(summary.index)
    for name, cells in table.items():
        assert cells == _cells(summary.loc[name]), name
    # The prose: the tight branch finishes N requests later, for less; eager costs N× as much.
    later = re.search(r"still finishes, (\w+) requests? later", flat)
    steps = summary["steps"]
    assert later is not None
    assert WORDS[later.group(1)] == steps["tight results"] - steps["original"]
    cost = summary["cost"]
    assert cost["tight results"] < cost["original"] and "for less" in flat
    times = re.search(r"costs ([\d.]+) times as much", flat)
    assert times is not None and not math.isnan(cost["eager compaction"])
    ratio = cost["eager compaction"] / cost["original"]
    assert times.group(1) == f"{ratio:.1f}", ratio
