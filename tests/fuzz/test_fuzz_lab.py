"""`Lab.open` and `Lab.report` on hostile recordings — hostile variants of the real recordings
(with their usage, compactions and times), opened at small and large windows in both views:
the Lab opens or raises a documented error, its report is written where it was told and nothing
else is, and the report runs nothing (no script, however the recording's text reads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from tests.fuzz.contract import EXAMPLES, FUZZ, holds
from tests.fuzz.mutations import mutated_file
from tests.fuzz.seeds import seed_files

pytest.importorskip(
    "ipywidgets", reason="the Lab needs the widgets extra: pip install 'ctxlab[lab]'"
)

RECORDINGS = ("claude_code", "codex", "copilot", "gemini_cli", "otel", "inspect", "openai")
"""Formats whose seeds record what a Lab shows: usage, compactions, tool calls."""


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    found = seed_files(tmp_path_factory.mktemp("seeds"))
    return [path for kind in RECORDINGS for path in found[kind]]


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 5))
@given(data=st.data())
async def test_a_lab_over_a_hostile_recording(
    seeds: list[Path], data: st.DataObject, tmp_path_factory: Any
) -> None:
    from ctxlab.widgets import Lab

    seed = seeds[data.draw(st.integers(0, 99), label="seed") % len(seeds)]
    folder = tmp_path_factory.mktemp("recording")
    path = folder / seed.name
    path.write_bytes(data.draw(mutated_file(seed), label="variant"))
    window = data.draw(st.sampled_from([2_000, 32_000, 200_000]), label="window")
    view = data.draw(st.sampled_from(["recorded", "replayed"]), label="view")
    out = tmp_path_factory.mktemp("out")
    report = out / "report.html"

    async def open_and_report() -> Path | None:
        lab = await Lab.open(path, context_window=window, config=ContextConfig(), view=view)
        lab.snapshot_html()
        return lab.report(report)

    # (holds runs a coroutine's creation; the awaiting is timed here by the same bounds)
    written = await _holding(open_and_report, [folder, out], [report])
    if written is not None:
        page = report.read_text()
        assert "<script" not in page.lower()
        assert page.startswith("<!doctype html>")


async def _holding(make: Any, watched: list[Path], may_write: list[Path]) -> Any:
    import asyncio

    # The contract checked on the awaited call: run it on a loop of its own, in a thread, so
    # that `holds` times and measures the whole of it.
    def run() -> Any:
        return asyncio.run(make())

    return await asyncio.to_thread(holds, run, watched=watched, may_write=may_write)
