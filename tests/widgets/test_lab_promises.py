"""What the Lab promises on screen: the status line shows the model's reply as escaped text
(a reply is text, never markup), and the percent toggle rescales every marker with the stacked
areas — a compaction, an offload and a recorded compaction sit at the same share of the input
limit as their request, not at their token count on a percent axis."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.io import load
from ctxlab.models import ScriptedModel
from ctxlab.widgets import Lab

XSS = "<img src=x onerror=alert(1)> & <b>bold</b>"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


async def test_the_status_line_shows_the_reply_as_escaped_text() -> None:
    agent = Agent(model=ScriptedModel([f"Done: {XSS}"]), counter=ApproximateCounter())
    lab = Lab(agent)
    await lab.send("go")
    status = lab.controls.status.value
    assert status == (
        "<span>done · 1 requests</span>"
        f"<pre style='white-space:pre-wrap'>Done: {html.escape(XSS)}</pre>"
    )
    assert "<img" not in status and "<b>" not in status


def _points(lab: Lab, name: str) -> list[tuple[float, float]]:
    trace = lab.budget.trace(name)
    return [(float(x), float(y)) for x, y in zip(trace["x"], trace["y"], strict=True)]


async def test_the_percent_toggle_rescales_the_markers(tmp_path: Path) -> None:
    lab = Lab(demo_agent(tmp_path / "ws"))
    await lab.send(DEMO_PROMPT)
    limits = list(lab.steps["input_limit"])
    names = ("compaction", "offload", "provider usage")
    tokens = {name: _points(lab, name) for name in names}
    assert all(tokens.values()), tokens  # the demo compacts, offloads and is billed
    lab.budget.units_picker.value = "percent"  # the toggle above the plot
    for name in names:
        shares = _points(lab, name)
        assert [x for x, _ in shares] == [x for x, _ in tokens[name]]
        expected = [100 * y / limits[int(x)] for x, y in tokens[name]]
        assert [y for _, y in shares] == pytest.approx(expected), name
    lab.budget.units_picker.value = "tokens"
    assert {name: _points(lab, name) for name in names} == tokens


async def test_the_percent_toggle_rescales_a_recorded_compactions_marker() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000, counter=ApproximateCounter())
    ((x, billed),) = _points(lab, "recorded compaction")
    assert (x, billed) == (2.5, 14_358)  # before request 3, on its bill
    lab.budget.units_picker.value = "percent"
    assert _points(lab, "recorded compaction") == [(2.5, pytest.approx(100 * 14_358 / 200_000))]
