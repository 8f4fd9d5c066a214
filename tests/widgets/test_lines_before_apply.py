"""The live Lab's lines follow the Config tab before Apply, and say they are not applied; the
Sources editor says when its text is unsaved.

Read from what the view is sent (the plot's traces and annotations as the browser gets them)
and from the status lines, never from the panels' own state.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from ctxlab import ApproximateCounter, TextSource, load
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel
from ctxlab.widgets import Lab
from ctxlab.widgets._budget import NOT_APPLIED
from ctxlab.widgets._sources_panel import UNSAVED

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
WINDOW = 10_000


def _shown(lab: Lab, name: str) -> list[float]:
    """The y values of trace ``name`` as the view holds them (what the browser draws)."""
    trace = next(t for t in lab.budget.plot.view.data if name in (t.get("uid"), t.get("name")))
    y = trace["y"]
    if isinstance(y, dict):  # a NumPy array goes as a typed buffer
        return np.frombuffer(y["buffer"], dtype=y["dtype"]).tolist()
    return list(y)


def _said_over_next(lab: Lab) -> list[str]:
    """The words the view draws over the lines' next point."""
    return [a["text"] for a in lab.budget.plot.view.figure_layout.get("annotations", [])]


async def _lab() -> Lab:
    agent = Agent(
        model=ScriptedModel(["one", "two", "three"], context_window=WINDOW),
        counter=ApproximateCounter(),
    )
    lab = Lab(agent)
    await lab.send("first")
    return lab


async def test_the_trigger_line_moves_with_the_slider_before_apply() -> None:
    lab = await _lab()
    in_force = lab.agent.context_config
    buffer = in_force.context_buffer_ratio
    assert _shown(lab, "trigger") == [8_000, 8_000]
    lab.config.trigger_ratio.value = 0.5
    # The next point moves at once; the request drawn keeps its own line; nothing is applied.
    assert _shown(lab, "trigger") == [8_000, 5_000]
    assert _shown(lab, "usage notice")[-1] == round((0.5 - buffer) * WINDOW)
    assert _said_over_next(lab) == [NOT_APPLIED]
    assert lab.agent.context_config is in_force
    assert lab.config.message == (
        "Not applied: trigger ratio 0.50 (in force: 0.80) — the plot's lines show it; "
        "Apply to use it"
    )
    assert "Applied" not in lab.config.message.replace("Not applied", "")
    # A request arriving meanwhile is drawn under the config in force; the lines ahead stay
    # where the controls are.
    await lab.send("second")
    assert list(lab.steps["trigger_tokens"]) == [8_000, 8_000]
    assert _shown(lab, "trigger") == [8_000, 8_000, 5_000]
    assert _said_over_next(lab) == [NOT_APPLIED]
    lab.config.apply_button.click()
    assert lab.config.message == "Applied: in force from the next request"
    assert _said_over_next(lab) == ["next request"]
    assert _shown(lab, "trigger") == [8_000, 8_000, 5_000]
    await lab.send("third")
    assert list(lab.steps["trigger_tokens"]) == [8_000, 8_000, 5_000]
    lab.close()


async def test_back_at_the_config_in_force_the_lines_and_the_status_say_so() -> None:
    lab = await _lab()
    lab.config.trigger_ratio.value = 0.6
    assert _shown(lab, "trigger")[-1] == 6_000
    lab.config.trigger_ratio.value = 0.8
    assert _shown(lab, "trigger") == [8_000, 8_000]
    assert _said_over_next(lab) == ["next request"]
    assert lab.config.message.startswith("In force")
    assert lab.config.pending is None
    lab.close()


async def test_an_invalid_combination_says_why_at_once_and_leaves_the_lines() -> None:
    lab = await _lab()
    lab.config.trigger_ratio.value = 0.5
    lab.config.context_buffer_ratio.value = 0.6  # at or past the trigger: refused
    assert lab.config.message.startswith("Not applied: context_buffer_ratio")
    assert _shown(lab, "trigger") == [8_000, 8_000]  # the config in force's
    assert _said_over_next(lab) == ["next request"]
    lab.config.context_buffer_ratio.value = 0.1
    assert _shown(lab, "trigger")[-1] == 5_000
    assert _shown(lab, "usage notice")[-1] == 4_000
    lab.close()


async def test_in_percent_the_moved_line_is_its_share_of_the_input_limit() -> None:
    lab = await _lab()
    lab.budget.units_picker.value = "percent"
    limit = lab.next_thresholds().input_limit
    lab.config.trigger_ratio.value = 0.3
    assert _shown(lab, "trigger")[-1] == pytest.approx(100 * 3_000 / limit)
    lab.close()


async def test_defaults_and_code_move_the_lines_once_and_say_so() -> None:
    lab = await _lab()
    agent = lab.agent
    agent.context_config = agent.context_config.merge(trigger_ratio=0.4)
    await lab.send("second")  # the Lab sees a request: the Config tab follows the code
    assert lab.config.trigger_ratio.value == 0.4 and lab.config.pending is None
    assert _shown(lab, "trigger")[-1] == 4_000
    lab.config.reset_button.click()
    assert _shown(lab, "trigger")[-1] == 8_000
    assert _said_over_next(lab) == [NOT_APPLIED]
    assert "Not applied" in lab.config.message and "Apply to use them" in lab.config.message
    assert agent.context_config.trigger_ratio == 0.4
    lab.close()


def test_the_ratio_sliders_send_their_value_while_dragged() -> None:
    agent = Agent(model=ScriptedModel([], context_window=WINDOW), counter=ApproximateCounter())
    lab = Lab(agent)
    assert lab.config.trigger_ratio.continuous_update is True
    lab.close()


async def test_a_replayed_recording_moves_its_lines_without_replaying() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000, view="replayed")
    steps = len(lab.log)
    replayed = lab.log.rows[-1]
    before = _shown(lab, "trigger")
    lab.config.trigger_ratio.value = 0.5
    assert _shown(lab, "trigger") == [*before[:-1], 100_000]
    assert _said_over_next(lab) == [NOT_APPLIED]
    assert len(lab.log) == steps and lab.log.rows[-1] is replayed  # nothing replayed
    lab.close()


async def test_as_recorded_a_moved_slider_draws_no_line_but_says_not_applied() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")
    lab.config.trigger_ratio.value = 0.5
    assert _shown(lab, "trigger") == [] or np.isnan(_shown(lab, "trigger")).all()
    assert _said_over_next(lab) == []
    assert lab.config.message.startswith("Not applied: trigger ratio 0.50")
    lab.close()


def test_the_source_editor_says_unsaved_until_saved() -> None:
    notes = TextSource("first notes", id="notes")
    agent = Agent(model=ScriptedModel([]), counter=ApproximateCounter())
    agent.context_source("notes", notes)
    lab = Lab(agent)
    row = lab.sources.rows["notes"]
    assert row["status"].value == "" and lab.sources.unsaved == []
    row["text"].value = "first notes, edited"  # as typed in the browser
    assert html.unescape(row["status"].value).endswith(
        f"{UNSAVED}</span>"
    ) and lab.sources.unsaved == ["notes"]
    row["text"].value = "first notes"  # typed back: nothing unsaved
    assert row["status"].value == "" and lab.sources.unsaved == []
    row["text"].value = "second notes"
    row["save"].click()
    assert notes.text == "second notes" and lab.sources.unsaved == []
    assert "unsaved" not in row["status"].value and "saved (revision" in row["status"].value
    # An edit over a text changed in code meanwhile says both.
    row["text"].value = "my edit"
    notes.text = "from code"
    row["text"].value = "my edit, longer"
    assert "unsaved" in row["status"].value and "changed in code too" in row["status"].value
    lab.close()
