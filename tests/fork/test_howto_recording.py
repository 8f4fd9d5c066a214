"""docs/howto/forks.md's "Your own recording" figures are what its code gives: the section's
offline code blocks run as written (from a folder where its relative paths resolve), and each of
its two tables must equal the frame the block ends with, row by row. Where each replay parts is
also checked against the test's own first difference (tests/fork/test_replay_turns.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.fork.test_howto_figures import _run
from tests.fork.test_replay_turns import first_parting

REPO = Path(__file__).parents[2]
PAGE = REPO / "docs" / "howto" / "forks.md"
SECTION = "## Your own recording, offline: where does it part?"


def _section(page: str) -> str:
    return page.split(SECTION)[1].split("### With your API key")[0]


def _tables(section: str) -> list[list[dict[str, str]]]:
    """Each Markdown table of the section: its rows, cells as written."""
    tables: list[list[dict[str, str]]] = []
    for block in re.findall(r"((?:^\|.*\n)+)", section, flags=re.M):
        lines = block.strip().splitlines()
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
        tables.append([dict(zip(head, row, strict=True)) for row in rows])
    return tables


def _written(frame: pd.DataFrame) -> list[dict[str, str]]:
    """A frame's rows written as the page writes them (a missing verdict as –, one note)."""

    def cell(value: Any) -> str:
        if isinstance(value, list):
            return "; ".join(value)
        return "–" if value is None or value is pd.NA else str(value)

    return [{k: cell(v) for k, v in row.items()} for row in frame.to_dict("records")]


async def test_the_own_recording_section_figures_are_what_its_code_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _section(PAGE.read_text())
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    (tmp_path / "tests").symlink_to(REPO / "tests")  # the page's path to the tests' fixture
    monkeypatch.chdir(tmp_path)
    space = await _run(blocks)
    replays, handed = _tables(section)
    columns = ["branch", "requests", "passed", "notes"]
    assert replays == _written(space["replayed"].frame()[columns])
    assert handed == _written(space["outcome"].frame()[["branch", "steps", "passed", "notes"]])
    # Each replay parts where the test's own comparison finds the first difference, and the
    # prose says so: all N requests replayed, cut results part at request d, compaction at d.
    parted = {}
    for run in space["replayed"].runs:
        said = int(re.search(r"request (\d+)", run.notes[0]).group(1))  # type: ignore[union-attr]
        assert first_parting(space["recording"], run, 0) == said
        parted[run.branch.name] = said
    flat = " ".join(section.split())
    assert f"replays all {parted['as recorded']} requests" in flat
    assert f"Cutting results parts at request {parted['results cut to 1,000 tokens']}," in flat
    assert f"messages at request {parted['compaction past 16 messages']}:" in flat
