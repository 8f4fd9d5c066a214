"""The static views tell what the live Lab tells: `Lab.report`, the snapshot a viewer without a
kernel shows — the header (the view, the model that answered, what the file does not record,
the calibration), each request's bill beside its estimate, the recorded compactions — on the
test fixture and on the corpus's real Claude Code recordings; a snapshot displayed in one view
keeps it when a later cell shows another."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from ctxlab import ContextConfig, load
from ctxlab.widgets import Lab
from tests.helpers import Displays

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def _billed_by_message(path: Path) -> list[int]:
    """The file's own bill, read without ctxlab: per assistant message id (in order), the
    input + cache reads + cache writes of its last line (Claude Code writes a line per content
    block, each carrying the message's usage)."""
    billed: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message") if isinstance(record, dict) else None
        if record.get("type") != "assistant" or not isinstance(message, dict):
            continue
        if record.get("isSidechain"):
            continue
        usage = message.get("usage") or {}
        billed[message["id"]] = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
    return list(billed.values())


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def _notes(header: str) -> str:
    """The live header's notes (what the file does not record, the calibration, ...)."""
    found = re.search(r"<span class='ctxlab-notes'[^>]*>(.*)</span>", header)
    assert found, header
    return found.group(1)


@pytest.fixture
async def recorded() -> Lab:
    return await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")


async def test_the_snapshot_and_the_report_carry_what_the_live_lab_shows(
    recorded: Lab, tmp_path: Path
) -> None:
    lab = recorded
    snapshot = lab.snapshot_html()
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    live = lab.header.value
    bills = _billed_by_message(FIXTURE)
    assert bills == [14_230, 19_950, 20_056, 14_358, 14_414]
    for page in (snapshot, report):
        # The live header's words: the view, the model, what the file does not hold, the fit.
        assert "view: <b>as recorded</b>" in page
        assert "model <code>claude-sonnet-4-6</code> (recorded)" in page
        assert "replay of" not in page
        assert _notes(live) in page
        assert "not recorded (System prompt, tool schemas): 14," in page
        assert "calibration:" in page
        # Each request's bill beside its estimate, as the file says it.
        text = _text(page)
        for step, billed in enumerate(bills):
            estimate = lab.log.manifests[step].estimated_input_tokens
            calibrated = lab.steps["calibrated"][step]
            if math.isnan(calibrated):
                # The first request has no earlier bill to forecast it from (out of sample).
                assert f"{estimate:,} · billed {billed:,} " in text
                assert f"{estimate:,} · billed {billed:,} · calibrated" not in text
            else:
                assert f"{estimate:,} · billed {billed:,} · calibrated {calibrated:,.0f}" in text
        # The session's own compaction, before request 3.
        assert re.search(r">3 ◆<", page), page
        assert "◆ the recorded session's own compaction" in page
    # The report has each request's manifest with its bill and its note, the title the view.
    assert report.count("billed <b>") == len(bills) + 1  # and the snapshot's latest
    # The header's note, and in each request's manifest the item standing for what the file
    # does not hold (its System prompt and tool schemas, sized from the bill).
    assert report.count("not recorded") >= len(bills) + 1
    assert "<title>ctxlab · claude_code_session · as recorded</title>" in report


async def test_replayed_the_static_views_say_under_which_config(recorded: Lab) -> None:
    lab = recorded
    lab.agent.context_config = ContextConfig(trigger_ratio=0.6)
    await lab.show_view("replayed")  # type: ignore[misc]
    snapshot = lab.snapshot_html()
    assert "view: <b>replayed under trigger_ratio 0.6</b>" in snapshot
    assert "as recorded" not in _text(snapshot)
    # The bill is the recorded requests': still beside each replayed estimate.
    assert "billed 20,056" in _text(snapshot)


async def test_a_report_gets_the_permissions_of_a_file_the_user_creates(
    recorded: Lab, tmp_path: Path
) -> None:
    umask = os.umask(0o022)
    try:
        path = recorded.report(tmp_path / "report.html")
        assert path.stat().st_mode & 0o777 == 0o644  # 0666 less the umask, not 0600
        path.chmod(0o664)  # a shared file stays shared when written again
        recorded.report(path)
        assert path.stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(umask)


async def test_a_snapshot_keeps_its_view_when_a_later_cell_shows_another(
    recorded: Lab, displays: Displays
) -> None:
    # The docs page of notebook 03: a cell displays the recording as recorded, a later cell
    # replays it. The first cell's snapshot must still show the recorded requests.
    lab = recorded
    lab._ipython_display_()
    assert "view: <b>as recorded</b>" in displays.latest("d2")
    await lab.show_view("replayed")  # type: ignore[misc]
    shown = displays.latest("d2")
    assert "view: <b>as recorded</b>" in shown and "replayed under" not in shown
    # Its numbers are the recorded requests': the one after the compaction restarts small.
    replayed = [m.estimated_input_tokens for m in lab.log.manifests]
    assert f">{replayed[3]:,} · billed" not in shown
    # A new display of the Lab shows the replay, and follows it from then on.
    lab._ipython_display_()
    again = displays.shown[-1]["text/html"]
    assert "view: <b>replayed under the defaults</b>" in again
    lab.agent.context_config = ContextConfig(trigger_ratio=0.5)
    await lab.replay()
    assert "view: <b>replayed under the defaults</b>" in displays.latest("d4")
    assert "view: <b>as recorded</b>" in displays.latest("d2")


CORPUS = Path(os.environ.get("CTXLAB_CORPUS", "")) / "raw" / "claude_code"
REAL = sorted(CORPUS.glob("*.jsonl"))[:2] if CORPUS.is_dir() else []


@pytest.mark.skipif(not REAL, reason="no Claude Code recordings: set CTXLAB_CORPUS (raw/)")
@pytest.mark.parametrize("path", REAL, ids=[p.stem[:8] for p in REAL])
async def test_on_real_recordings_the_report_tells_what_the_lab_shows(
    path: Path, tmp_path: Path
) -> None:
    lab = await Lab.open(load(path), context_window=200_000, view="recorded")
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    assert _notes(lab.header.value) in report
    assert "view: <b>as recorded</b>" in report and "replay of" not in report
    text = _text(report)
    billed = [b for b in lab.steps["usage_total_input"] if b == b and b is not None]
    assert billed and len(billed) == len(lab.steps)
    for step, value in enumerate(billed):
        assert f"{lab.log.manifests[step].estimated_input_tokens:,} · billed {int(value):,}" in (
            text
        )
    # The bill the report shows is the file's, read independently of ctxlab.
    assert [int(b) for b in billed] == _billed_by_message(path)


async def test_figures_calibrated_on_the_demo_models_usage_say_it_is_made_up(
    tmp_path: Path,
) -> None:
    from ctxlab import WhatIf
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    lab = Lab(demo_agent(tmp_path / "ws"))
    await lab.send(DEMO_PROMPT)
    for page in (lab.header.value, lab.snapshot_html()):
        assert "calibration:" in page and "makes up" in page
    what = WhatIf(lab.agent.transcript(), {"default": ContextConfig()}, context_window=8_000)
    await what.run()
    assert "the demo model's usage, which it makes up" in what.table().attrs["calibration"]
    # A recording's usage is its own: no such word.
    recording = await Lab.open(load(FIXTURE), context_window=200_000)
    assert "calibration:" in recording.header.value and "makes up" not in recording.header.value
    what = WhatIf(load(FIXTURE), {"default": ContextConfig()}, context_window=8_000)
    await what.run()
    assert "measured on this recording's usage" in what.table().attrs["calibration"]
