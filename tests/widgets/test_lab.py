"""The Lab driven from Python: panels, figure data, DataFrames, config, sources, controls."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import json
from pathlib import Path

import pytest

from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.exceptions import UsageError

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")
import numpy as np

from ctxlab import ApproximateCounter, ContextConfig, TextSource
from ctxlab.agent import Agent
from ctxlab.analysis._prices import price_for
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.manifest import PLACEMENTS
from ctxlab.models import ScriptedModel, tool_call
from ctxlab.widgets import STEP_COLUMNS, Lab

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
async def demo_lab(tmp_path: Path) -> Lab:
    # The demo model has no price of its own (unpriced): its steps are priced as Sonnet here.
    lab = Lab(demo_agent(tmp_path / "ws"), price=price_for("claude-sonnet-4-6"))
    await lab.send(DEMO_PROMPT)
    assert lab.last_error is None
    return lab


async def test_steps_frame_and_figure_follow_the_session(demo_lab: Lab) -> None:
    lab = demo_lab
    steps = lab.steps
    assert list(steps.columns) == [*STEP_COLUMNS, "cost", "cumulative_cost", "priced_from"]
    assert len(steps) == len([m for m in lab.agent.manifests if m.purpose == "reasoning"])
    # What each request cost with the prompt cache; a compaction's step carries its summary call.
    assert (steps["cost"] > 0).all() and steps["cumulative_cost"].is_monotonic_increasing
    summaries = [m for m in lab.log.sent if m.purpose == "summary"]
    assert summaries and len(lab.log.sent) == len(steps) + len(summaries)
    assert steps["cumulative_cost"].iloc[-1] == pytest.approx(
        sum(c.cost for c in costs_of_manifests(lab.log.sent, price_for("claude-sonnet-4-6")))
    )
    assert (steps["validation"] == "passed").all()
    assert steps["usage_input"].notna().all()
    # One x per request in every stacked area, with the manifest's tokens.
    for placement in PLACEMENTS:
        trace = lab.budget.trace(placement)
        assert list(trace["x"]) == list(range(len(steps)))
        assert list(trace["y"]) == list(steps[placement])
    assert lab.budget.trace("conversation")["stackgroup"] == "tokens"
    # Threshold lines: one value per request plus the next request's.
    limit = lab.budget.trace("input limit")
    assert (
        len(limit["x"]) == len(steps) + 1 and limit["y"][-1] == lab.next_thresholds()["input_limit"]
    )
    compacted = steps.index[steps["compaction"] == "summary"].tolist()
    assert list(lab.budget.trace("compaction")["x"]) == compacted
    offloaded = steps.index[steps["offloads"] > 0].tolist()
    assert list(lab.budget.trace("offload")["x"]) == offloaded and offloaded
    assert len(lab.items(3)) == len(lab.log.manifests[3].items)
    assert "tool_result_offload" in set(lab.transforms(offloaded[0])["kind"])


async def test_clicking_a_point_selects_the_step_everywhere(demo_lab: Lab) -> None:
    lab = demo_lab
    # What the browser view sends when a point is clicked (widgets/plot.js).
    lab.budget.plot.view._message(None, {"type": "click", "x": 2, "trace": "conversation"}, [])
    assert lab.selected == 2
    assert lab.budget.plot.view.figure_layout["shapes"][0]["x0"] == 2  # what the view draws
    assert "<b>Request 2</b>" in lab.manifest.header.value
    assert sum(i["tokens"] for i in lab.map.items if not i["ghost"]) == sum(
        i.tokens for i in lab.log.manifests[2].items
    )


async def test_manifest_panel_shows_items_transforms_and_diff(demo_lab: Lab) -> None:
    lab = demo_lab
    step = int(lab.steps.index[lab.steps["offloads"] > 0][0])
    lab.select(step)
    assert len(lab.manifest.table.rows) == len(lab.log.manifests[step].items)
    assert "tool_result_offload" in lab.manifest.transforms.value
    assert "appeared" in lab.manifest.diff.value
    lab.select(0)
    assert lab.manifest.diff.value == "<i>first request</i>"
    # The context map's ghost shows what the offload removed; selecting a segment highlights it.
    lab.select(step)
    assert any(i["ghost"] == "offloaded" for i in lab.map.items)
    # A click on a map segment opens its block at the top of the Context tab and marks its row.
    manifest = lab.log.manifests[step]
    item = next(i for i in manifest.items if i.kind == "message")
    lab.map.selected = item.id
    assert lab.tabs.selected_index == 1
    page = lab.context.widget.value
    assert page.index("ctxlab-focus") < page.index("system ·")  # at the top
    assert f"Selected item</b> {item.id}" in page and f"{item.tokens} tokens" in page
    assert lab.manifest.table.selected == item.id
    # The reverse: a click on a row (what table.js sends) outlines it in the map and opens it.
    system = next(i for i in manifest.items if i.id.startswith("system/"))
    lab.manifest.table.selected = system.id
    assert lab.map.selected == system.id
    assert f"Selected item</b> {system.id}" in lab.context.widget.value


async def test_context_panel_escapes_tool_output(tmp_path: Path) -> None:
    def show(path: str) -> str:
        """Return a file."""
        return f"<html><body>{XSS}</body></html>"

    model = ScriptedModel([tool_call("show", {"path": "t.html"}), "shown"])
    lab = Lab(Agent(model=model, tools=[show], counter=ApproximateCounter()))
    await lab.send("show the template")
    lab.tabs.selected_index = 1
    lab.select(1)
    html = lab.context.widget.value
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img" not in html and "<html>" not in html


async def test_config_panel_refuses_invalid_and_applies_valid_from_the_next_step(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(["one", "two"], context_window=10_000)
    agent = Agent(model=model, counter=ApproximateCounter())
    lab = Lab(agent)
    await lab.send("first")
    before = agent.context_config
    lab.config.trigger_ratio.value = 0.5
    lab.config.context_buffer_ratio.value = 0.6
    lab.config.apply_button.click()
    assert (
        "Not applied" in lab.config.status.value
        and "context_buffer_ratio" in lab.config.status.value
        and lab.config.message.startswith("Not applied: context_buffer_ratio")
        and "<" not in lab.config.message
    )
    assert agent.context_config == before
    lab.config.context_buffer_ratio.value = 0.2
    lab.config.reserve_ratio.value = 0.05
    lab.config.apply_button.click()
    assert "Applied" in lab.config.status.value
    assert agent.context_config.trigger_ratio == 0.5
    # The trigger line moves at once (its next point), the recorded request keeps its value.
    trigger = lab.budget.trace("trigger")
    assert trigger["y"][-1] == 5_000 and trigger["y"][0] == 8_000
    await lab.send("second")
    assert list(lab.steps["trigger_tokens"]) == [8_000, 5_000]


async def test_sources_panel_toggles_and_edits_text(tmp_path: Path) -> None:
    notes = TextSource("first notes", id="notes")
    model = ScriptedModel(["a", "b", "c"])
    agent = Agent(model=model, counter=ApproximateCounter())
    agent.context_source("notes", notes)
    lab = Lab(agent)
    row = lab.sources.rows["notes"]
    row["text"].value = "edited in the panel"
    row["save"].click()
    assert notes.text == "edited in the panel"
    await lab.send("go")
    ids = {i.id: i for i in lab.log.manifests[-1].items}
    assert ids["source/notes/notes"].revision == "edit-1"
    row["enabled"].value = False
    await lab.send("again")
    assert "source/notes/notes" not in {i.id for i in lab.log.manifests[-1].items}
    row["enabled"].value, row["priority"].value, row["required"].value = True, 7, True
    assert agent.sources["notes"].priority == 7 and agent.sources["notes"].required is True
    assert "on failure: fail" in lab.sources.widget.children[0].children[0].children[0].value


async def test_the_source_editor_follows_code_and_never_writes_stale_text() -> None:
    notes = TextSource("first notes", id="notes")
    agent = Agent(model=ScriptedModel(["a", "b"]), counter=ApproximateCounter())
    agent.context_source("notes", notes)
    lab = Lab(agent)
    row = lab.sources.rows["notes"]
    notes.text = "changed in code"
    await lab.send("go")  # the Lab sees a request: the editor shows the new text
    assert row["text"].value == "changed in code" and "updated from code" in row["status"].value
    row["save"].click()  # saving an untouched editor keeps the code's text
    assert notes.text == "changed in code"
    # Both changed: the editor keeps the user's edit and says so; Save is the user's choice.
    row["text"].value = "my edit"
    notes.text = "code again"
    lab.tabs.selected_index = 3
    assert row["text"].value == "my edit" and "changed in code too" in row["status"].value
    row["save"].click()
    assert notes.text == "my edit" and "had been changed in code" in row["status"].value


async def test_controls_send_compact_and_stop(tmp_path: Path) -> None:
    lab = Lab(demo_agent(tmp_path / "ws"))
    lab.controls.prompt.value = DEMO_PROMPT
    lab.controls.send_button.click()
    assert lab.task is not None and lab.controls.send_button.disabled
    await lab.task
    assert not lab.controls.send_button.disabled and "done" in lab.controls.status.value
    marks = len(lab.budget.trace("compaction")["x"])
    lab.controls.hint.value = "Keep ledger/totals.py"
    lab.controls.compact_button.click()
    await asyncio.sleep(0.2)
    assert len(lab.budget.trace("compaction")["x"]) == marks + 1
    assert "compacted" in lab.controls.status.value

    gate = asyncio.Event()

    async def slow() -> str:
        """Waits."""
        await gate.wait()
        return "x"

    stopping = Lab(
        Agent(
            model=ScriptedModel([tool_call("slow"), "never"]),
            tools=[slow],
            counter=ApproximateCounter(),
        )
    )
    task = stopping.start("go")
    await asyncio.sleep(0.05)
    stopping.controls.stop_button.click()
    gate.set()
    await task  # type: ignore[misc]
    # A Stop is not an error: said plainly, not in red, and nothing raised.
    assert "stopped after" in stopping.controls.status.value
    assert "color:#c00" not in stopping.controls.status.value and stopping.last_error is None
    assert stopping.start("   ") is None and "Type a message" in stopping.controls.status.value


async def test_errors_are_shown_not_swallowed() -> None:
    lab = Lab(Agent(model=ScriptedModel([]), counter=ApproximateCounter()))
    with pytest.raises(Exception, match="ran out of replies"):
        await lab.send("hi")  # code gets the exception ...
    assert "ran out of replies" in lab.controls.status.value  # ... and the panel shows it
    assert lab.last_error is not None
    # The Send button's path shows it without raising into the event loop.
    task = lab.start("again")
    assert task is not None and await task is None
    assert "ran out of replies" in lab.controls.status.value
    with pytest.raises(UsageError, match=r"no request 100: this Lab has requests 0 to 1"):
        lab.items(100)
    with pytest.raises(UsageError, match="no request yet"):
        Lab(Agent(model=ScriptedModel([]), counter=ApproximateCounter())).transforms()


async def test_closing_unsubscribes() -> None:
    agent = Agent(model=ScriptedModel(["a", "b"]), counter=ApproximateCounter())
    lab = Lab(agent)
    await agent("one")
    assert len(lab.steps) == 1
    lab.close()
    await agent("two")
    assert len(lab.steps) == 1


async def test_a_later_display_starts_from_the_current_figure(demo_lab: Lab) -> None:
    # A view opened later (the dashboard shown again) starts from the synced state: it must be
    # the figure as it is now, not as it was created.
    lab = demo_lab
    state = lab.budget.plot.view.get_state()
    synced = {t["name"]: t.get("x") for t in state["data"]}
    assert synced["conversation"]["buffer"].nbytes == 4 * len(lab.steps)
    assert state["figure_layout"]["shapes"][0]["x0"] == lab.selected


def test_the_config_panel_is_generated_from_the_config_metadata() -> None:
    from pydantic import Field

    from ctxlab.config import _fields as _config_fields

    agent = Agent(model=ScriptedModel([]), counter=ApproximateCounter())
    lab = Lab(agent)
    names = [f.name for f in _config_fields.tunable_fields(ContextConfig)]
    assert list(lab.config.controls) == names
    assert "trigger_ratio" in names and "compression_tool_enabled" in names
    assert "summary_schema" not in names and "budget" not in names
    # Bounds and help come from ContextConfig, not from the panel.
    assert lab.config.trigger_ratio.max == 0.9
    assert lab.config.tool_result_limit.min == 1
    assert "ratio of the model's context size" in lab.config.trigger_ratio.tooltip
    lab.close()

    # A field added to the config appears without touching the panel, and applies.
    class Extended(ContextConfig):
        future_ratio: float = Field(default=0.1, ge=0, le=0.5, title="Future")
        """A new knob."""

    agent.context_config = Extended()
    grown = Lab(agent)
    assert grown.config.controls["future_ratio"].max == 0.5
    assert grown.config.future_ratio.tooltip == "A new knob."
    grown.config.future_ratio.value = 0.3
    grown.config.apply_button.click()
    assert agent.context_config.future_ratio == 0.3  # type: ignore[attr-defined]
    grown.close()


async def test_the_lab_draws_the_engine_lines_for_the_next_request() -> None:
    agent = Agent(model=ScriptedModel([], context_window=10_000), counter=ApproximateCounter())
    lab = Lab(agent)
    assert lab.next_thresholds() == agent.next_thresholds()
    with pytest.warns(DeprecationWarning, match="next_thresholds"):
        assert lab.next_lines() == agent.next_thresholds()
    lab.config.trigger_ratio.value = 0.5
    lab.config.apply_button.click()
    assert lab.budget.trace("trigger")["y"][-1] == agent.next_thresholds().trigger_tokens == 5_000
    lab.close()


async def test_a_resumed_agent_shows_its_past_steps_with_their_usage(tmp_path: Path) -> None:
    from ctxlab import SessionLog

    log = SessionLog(tmp_path / "log.sqlite")

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    first = Agent(
        model=ScriptedModel([tool_call("add", {"a": 1, "b": 2}), "3"]),
        tools=[add],
        counter=ApproximateCounter(),
        session_log=log,
        session_id="s",
    )
    await first("1 + 2?")
    live = Lab(first)  # a Lab made after the call sees it too
    assert len(live.steps) == 2
    resumed = Agent(
        model=ScriptedModel(["ok"]), counter=ApproximateCounter(), session_log=log, session_id="s"
    )
    lab = Lab(resumed)
    steps = lab.steps
    assert list(steps["request_id"]) == [m.request_id for m in first.manifests]
    assert steps["usage_input"].notna().all()  # the provider's usage came back from the log
    assert lab.selected == 1 and len(lab.budget.trace("conversation")["x"]) == 2
    await lab.send("and 3 + 4?")
    assert len(lab.steps) == 3
    lab.close()
    live.close()


async def test_the_plot_shows_the_provider_usage_beside_the_estimate(demo_lab: Lab) -> None:
    steps = demo_lab.steps
    usage = demo_lab.budget.trace("provider usage")
    assert list(usage["x"]) == list(steps["step"])
    assert list(usage["y"]) == list(steps["usage_total_input"])
    ratio = steps["usage_total_input"] / steps["total"]
    assert (abs(steps["calibration"] - ratio) < 1e-3).all()


async def test_a_recording_opens_in_the_lab_replayed_with_its_real_usage() -> None:
    from ctxlab import load
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    agent = demo_agent()
    await agent(DEMO_PROMPT)
    transcript = load(
        {
            "system": agent.system_prompt,
            "messages": [m.model_dump(mode="json") for m in agent.history],
        },
        format="anthropic",
    )
    recorded = agent.transcript()
    transcript = dataclasses.replace(transcript, tools=recorded.tools, usage=recorded.usage)
    lab = await Lab.open(
        transcript, context_window=8_000, counter=ApproximateCounter(), view="replayed"
    )
    steps = lab.steps
    assert len(steps) == sum(m.role == "assistant" for m in agent.history)
    assert steps["usage_total_input"].notna().all()  # the recording's usage, step by step
    assert (steps["tools"] > 0).all()  # its tool schemas are counted
    assert list(lab.budget.trace("provider usage")["y"]) == list(steps["usage_total_input"])
    assert lab.controls.send_button.disabled and "read-only" in lab.controls.status.value
    # The recorded content reaches the panels, as with a live agent: the Context tab shows the
    # request's blocks, the items say what they are (not bare message hashes).
    from ctxlab.manifest import item_rows

    lab.tabs.selected_index = 1  # the Context tab
    lab.select(2)
    assert "no request to show" not in lab.context.widget.value
    assert html.escape(DEMO_PROMPT.split("\n")[0][:40]) in lab.context.widget.value
    rows = item_rows(lab.log.manifests[2], lab.log.requests[2])
    assert any(row.label.startswith(("tool call", "tool result")) for row in rows)
    assert not any(row.label.startswith("message ") for row in rows)
    with pytest.raises(UsageError, match="read-only"):
        await lab.send("hi")
    # A config applied replays the recording again: here compaction comes much earlier.
    before = (steps["compaction"] != "").sum()
    assert before >= 1  # the demo compacts once in 8k
    lab.config.trigger_ratio.value = 0.3
    lab.config.reserve_ratio.value = 0.05
    lab.config.context_buffer_ratio.value = 0.1
    lab.config.apply_button.click()
    await lab.task  # type: ignore[misc]
    assert len(lab.steps) == len(steps)
    assert (lab.steps["compaction"] != "").sum() > before
    lab.close()


async def test_items_say_what_they_are_what_was_done_and_why(demo_lab: Lab) -> None:
    from ctxlab.manifest import item_rows

    lab = demo_lab
    described = [
        (step, row)
        for step, (manifest, request) in enumerate(
            zip(lab.log.manifests, lab.log.requests, strict=True)
        )
        for row in item_rows(manifest, request)
    ]
    labels = [row.label for _, row in described]
    assert any(label.startswith("user: ") for label in labels)
    assert any(label.startswith("tool call ") for label in labels)
    assert any(label.startswith("tool result of ") for label in labels)
    assert not any(label.startswith("message/") for label in labels)  # never a bare hash
    offloaded = [row for _, row in described if "offloaded" in row.badges]
    assert offloaded and "written to" in offloaded[0].why
    summarized = [row for _, row in described if "summarized" in row.badges]
    assert summarized and "% of the window" in summarized[0].why
    # The panel shows the same words for the selected step.
    step = next(s for s, row in described if "summarized" in row.badges)
    lab.select(step)
    shown = [" ".join(map(str, row)) for row in lab.manifest.table.visible_rows()]
    assert any("summarized" in row and "% of the window" in row for row in shown)


async def test_config_speaks_in_titles_and_tokens_and_warns_of_frequent_compaction(
    tmp_path: Path,
) -> None:
    agent = demo_agent(tmp_path / "ws")
    lab = Lab(agent)
    panel = lab.config
    trigger = panel.controls["trigger_ratio"]
    assert trigger.description == "Trigger ratio"
    window = agent.model.context_window
    assert f"= {int(0.8 * window):,} tokens of the {window:,}-token window" in (
        panel.in_tokens["trigger_ratio"].value
    )
    trigger.value = 0.3
    assert f"= {int(0.3 * window):,} tokens" in panel.in_tokens["trigger_ratio"].value
    assert panel.apply() is not None
    await lab.send(DEMO_PROMPT)
    compactions = lab.log.recent_compactions(12)
    assert compactions >= 4
    assert f"{compactions} compactions in the last 12 requests" in lab.controls.warning.value
    panel.reset()
    assert trigger.value == 0.8 and "Apply to use them" in panel.status.value


async def test_the_plot_hover_says_each_steps_total_share_and_events(demo_lab: Lab) -> None:
    lab = demo_lab
    layout = lab.budget.plot.view.figure_layout
    assert layout["hovermode"] == "x unified"
    total = lab.budget.trace("total")
    steps = lab.steps
    assert list(total["y"]) == list(steps["total"])
    share = lab.budget.trace("share")
    assert share["y"][0] == pytest.approx(
        100 * steps["total"].iloc[0] / steps["input_limit"].iloc[0]
    )
    assert "% of the input limit" in share["hovertemplate"]
    compacted = int(steps.index[steps["compaction"] != ""][0])
    marks = lab.budget.trace("compaction")["text"]
    assert f"in request {compacted}" in marks[0] and "→" in marks[0]
    # Whole requests on the x axis, however few.
    assert layout["xaxis"]["tick0"] == 0 and float(layout["xaxis"]["dtick"]).is_integer()


async def test_the_context_view_names_tools_formats_json_and_counts_like_the_manifest() -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        return json.dumps({"key": key, "values": [1, 2]})

    model = ScriptedModel([tool_call("lookup", {"key": "a"}), "done"])
    lab = Lab(
        Agent(system_prompt="Be brief.", model=model, tools=[lookup], counter=ApproximateCounter())
    )
    await lab.send("go")
    lab.tabs.selected_index = 1
    lab.select(1)
    page = lab.context.widget.value
    assert "tool result of lookup (" in page and "tool call lookup (" in page
    assert "&quot;values&quot;: [\n    1," in page  # the result's JSON, laid out
    system = sum(i.tokens for i in lab.log.manifests[1].items if i.id.startswith("system/"))
    assert f"system · {system} tokens" in page


async def test_the_map_leaves_room_for_the_input_limit_mark(demo_lab: Lab) -> None:
    from ctxlab.widgets._map import HEADROOM

    manifest = demo_lab.log.manifests[-1]
    demo_lab.map.show(manifest)
    largest = max(manifest.estimated_input_tokens, manifest.input_limit)
    assert demo_lab.map.scale == round(largest * HEADROOM) > manifest.input_limit
    assert demo_lab.map.marks["input limit"] == manifest.input_limit


def test_an_empty_lab_says_so_and_draws_whole_requests() -> None:
    lab = Lab(Agent(model=ScriptedModel([]), counter=ApproximateCounter()))
    assert "No request yet" in lab.manifest.header.value
    assert "No request yet" in lab.context.widget.value
    assert lab.budget.plot.view.figure_layout["xaxis"]["dtick"] == 1 and lab.steps.empty
    assert "no requests yet" in lab.snapshot_html()


async def test_the_plot_sends_typed_arrays(demo_lab: Lab) -> None:
    # The view receives arrays as binary buffers of a JavaScript typed-array type (int64 has
    # none, and lists are slow to serialize).
    # The lines are float64: NaN where a request has none (a recording as recorded).
    sent = {t["name"]: t for t in demo_lab.budget.plot.view.data}
    for name, axis, dtype in [
        *((n, a, "int32") for n in ("conversation", "total") for a in ("x", "y")),
        ("trigger", "x", "int32"),
        ("trigger", "y", "float64"),
    ]:
        assert sent[name][axis]["dtype"] == dtype, (name, axis)
        assert isinstance(sent[name][axis]["buffer"], memoryview)


async def test_the_items_table_filters_and_sorts(demo_lab: Lab) -> None:
    lab = demo_lab
    lab.select(len(lab.log) - 1)
    table = lab.manifest.table
    everything = len(table.visible_rows())
    assert everything == len(lab.log.manifests[-1].items)
    table.filter = "TOOL RESULT OF"  # what the filter box sends; case does not matter
    kept = table.visible_rows()
    assert 0 < len(kept) < everything and all("tool result of" in row[2] for row in kept)
    table.filter = ""
    column = list(table.columns).index("tokens")
    table.sort = ["tokens", "desc"]  # what a click on the header sends (twice: asc, then desc)
    tokens = [row[column] for row in table.visible_rows()]
    assert tokens == sorted(tokens, reverse=True) and len(tokens) == everything
    table.sort = ["tokens", "asc"]
    assert [row[column] for row in table.visible_rows()] == sorted(tokens)
    table.sort = ["", ""]
    assert table.visible_rows() == table.rows
    with pytest.raises(Exception, match="cannot sort by 'nope'"):
        table.sort = ["nope", "asc"]


async def test_the_plot_can_show_shares_of_the_input_limit(demo_lab: Lab) -> None:
    lab = demo_lab
    steps = lab.steps
    tokens = list(lab.budget.trace("conversation")["y"])
    lab.budget.units_picker.value = "percent"  # the toggle above the plot
    view = {t["name"]: t for t in lab.budget.plot.view.data}
    conversation = np.frombuffer(view["conversation"]["y"]["buffer"], dtype=np.float64)
    expected = 100 * steps["conversation"] / steps["input_limit"]
    assert conversation.tolist() == pytest.approx(expected.tolist())
    assert view["conversation"]["hovertemplate"].startswith("conversation: %{y:.1f} %")
    # The hover still gives the total in tokens; the axis says what it shows.
    assert list(lab.budget.trace("total")["customdata"]) == list(steps["total"])
    assert lab.budget.plot.view.figure_layout["yaxis"]["title"]["text"] == "% of the input limit"
    trigger = lab.budget.trace("trigger")["y"]
    assert trigger[-1] == pytest.approx(
        100 * lab.next_thresholds().trigger_tokens / lab.next_thresholds().input_limit
    )
    lab.budget.units_picker.value = "tokens"
    assert list(lab.budget.trace("conversation")["y"]) == tokens
    assert (
        lab.budget.plot.view.figure_layout["xaxis"]["unifiedhovertitle"]["text"] == "request %{x}"
    )
    with pytest.raises(UsageError, match="units must be one of"):
        lab.budget.set_units("bytes")


async def test_opening_a_source_item_shows_its_block_at_the_top_of_the_context_tab() -> None:
    agent = Agent(model=ScriptedModel(["a"]), counter=ApproximateCounter())
    agent.context_source("notes", TextSource("the release is on Friday", id="plan"))
    lab = Lab(agent)
    await lab.send("when is the release?")
    lab.open_item("source/notes/plan")
    assert lab.tabs.selected_index == 1
    page = lab.context.widget.value
    focus = page[page.index("ctxlab-focus") : page.index("</div>", page.index("ctxlab-focus"))]
    assert "Selected item</b> source/notes/plan · references" in focus
    assert "the release is on Friday" in focus
