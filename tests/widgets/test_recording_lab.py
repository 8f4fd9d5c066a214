"""A recording in the Lab: both views, the recorded compactions, the bill, progress, numbering,
code and widgets agreeing, and the static snapshot kept at the latest state."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from ctxlab import ApproximateCounter, ContextConfig, load
from ctxlab.analysis._replay import replay
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.tokens import TiktokenCounter, TokenCache
from ctxlab.widgets import Lab

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.fixture
async def recorded() -> Lab:
    return await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")


async def test_as_recorded_the_requests_restart_from_the_recorded_summary(recorded: Lab) -> None:
    lab = recorded
    steps = lab.steps
    assert list(steps["step"]) == [0, 1, 2, 3, 4]
    assert list(steps["recorded_compaction"]) == ["", "", "", "manual", ""]
    # The request after the compaction holds the summary alone: it is smaller than the one before.
    assert steps["total"][3] < steps["total"][2] / 2
    assert list(steps["usage_total_input"]) == [14_230, 19_950, 20_056, 14_358, 14_414]
    # Calibrated against the bill, within 10 % here (no corpus needed).
    errors = abs(steps["calibrated"] - steps["usage_total_input"]) / steps["usage_total_input"]
    assert errors.max() < 0.10, errors.tolist()
    assert lab.calibration is not None and lab.calibration.median_error is not None
    # The Lab's rows carry what the calibration says of each request, segment by segment.
    assert list(steps["calibrated"]) == list(lab.calibration.frame()["calibrated"])


async def test_the_header_says_what_the_file_does_not_record(recorded: Lab) -> None:
    header = recorded.header.value
    assert "view: <b>as recorded</b>" in header
    assert "not recorded in the file: System prompt, tool schemas" in header
    fit = recorded.calibration.fit() if recorded.calibration else None
    assert fit is not None
    assert f"about {fit.fixed[0]:,.0f} billed tokens a request" in header
    assert "1 recorded compaction" in header


async def test_the_recorded_compaction_is_marked_on_the_plot_and_in_the_manifest(
    recorded: Lab,
) -> None:
    lab = recorded
    marker = lab.budget.trace("recorded compaction")
    assert list(marker["x"]) == [2.5]
    assert list(marker["y"]) == [14_358]  # the bill of the first request after it
    assert list(marker["text"]) == [
        "recorded compaction (manual) before request 3: 20,900 → 14,358 billed"
    ]
    lab.select(3)
    header = lab.manifest.header.value
    assert "◆ recorded compaction" in header and "20,900 tokens before" in header
    assert "billed <b>14,358</b>" in header
    assert "not recorded in the file: System prompt, tool schemas" in header
    # The items say what they are: the summary's opening words, not a hash.
    whats = [row[2] for row in lab.manifest.table.rows]
    assert whats and whats[0].startswith("user: This session is being continued")


async def test_the_context_tab_shows_the_recorded_blocks(recorded: Lab) -> None:
    lab = recorded
    lab.select(1)
    lab.tabs.selected_index = 1
    shown = lab.context.widget.value
    assert "Request 1" in shown and "no request to show" not in shown
    assert "ingest workers time out" in shown


async def test_the_replayed_view_marks_the_recorded_compaction_too(recorded: Lab) -> None:
    lab = recorded
    task = lab.show_view("replayed")
    assert task is not None
    await task
    assert lab.view_picker is not None and lab.view_picker.value == "replayed"
    assert "view: <b>replayed under a config</b>" in lab.header.value
    steps = lab.steps
    assert list(steps["recorded_compaction"]) == ["", "", "", "manual", ""]
    # ctxlab keeps the conversation: its request 3 is no smaller than its request 2.
    assert steps["total"][3] > steps["total"][2]
    assert list(lab.budget.trace("recorded compaction")["x"]) == [2.5]


async def test_apply_on_a_recording_shows_progress_and_what_changed(recorded: Lab) -> None:
    lab = recorded
    seen: list[str] = []
    lab.controls.status.observe(lambda c: seen.append(c["new"]), names="value")
    lab.config.controls["trigger_ratio"].value = 0.5
    lab.config.apply()
    assert lab.task is not None
    await lab.task
    assert seen[0] == "replaying 5 requests…"
    assert seen[-1].startswith(
        "replaying 5 requests… done · read-only recording · 5 requests replayed under the config"
    )
    assert lab.agent.context_config.trigger_ratio == 0.5
    assert lab.view_picker is not None and lab.view_picker.value == "replayed"


async def test_numbering_matches_between_plot_tables_and_replay_steps() -> None:
    transcript = load(FIXTURE)
    lab = await Lab.open(transcript, context_window=200_000, view="replayed")
    numbers = [
        s.number
        async for s in replay(
            transcript.messages, context_window=200_000, counter=TokenCache(TiktokenCounter())
        )
    ]
    assert numbers == list(lab.steps["step"]) == list(lab.budget.trace("conversation")["x"])
    assert list(lab.budget.trace("total")["x"]) == numbers


async def test_a_config_assigned_in_code_moves_the_config_tab() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000)
    lab.agent.context_config = ContextConfig(trigger_ratio=0.55)
    lab.tabs.selected_index = 2  # the Config tab reads the config in force
    assert lab.config.controls["trigger_ratio"].value == 0.55
    # A control moved but not applied stays as the user left it.
    lab.config.controls["trigger_ratio"].value = 0.7
    lab.tabs.selected_index = 0
    lab.tabs.selected_index = 2
    assert lab.config.controls["trigger_ratio"].value == 0.7


class _Displays:
    def __init__(self) -> None:
        self.shown: list[Any] = []
        self.updates: list[tuple[str, dict[str, str]]] = []

    def display(self, obj: Any, raw: bool = False, display_id: Any = None) -> Any:
        self.shown.append(obj)
        if display_id is True:

            class Handle:
                display_id = f"d{len(self.shown)}"

            return Handle()
        return None

    def update_display(self, obj: Any, raw: bool = False, display_id: str = "") -> None:
        self.updates.append((display_id, obj))


async def test_the_static_snapshot_follows_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import IPython.display

    displays = _Displays()
    monkeypatch.setattr(IPython.display, "display", displays.display)
    monkeypatch.setattr(IPython.display, "update_display", displays.update_display)
    lab = Lab(demo_agent(tmp_path / "ws"))
    lab._ipython_display_()
    widget, snapshot = displays.shown
    assert widget["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id
    assert widget["text/plain"] == "Lab(agent='demo', steps=0)"
    assert "0 requests" in snapshot["text/html"] and "ctxlab-static" in snapshot["text/html"]
    await lab.send(DEMO_PROMPT)
    display_id, latest = displays.updates[-1]
    assert display_id == "d2"
    count = len(lab.log)
    assert count > 1 and f"{count} requests" in latest["text/html"]
    assert latest["text/plain"] == f"[ctxlab snapshot: {count} requests]"


async def test_a_live_agent_is_calibrated_from_its_usage(tmp_path: Path) -> None:
    lab = Lab(demo_agent(tmp_path / "ws"))
    assert lab.calibration is None
    await lab.send(DEMO_PROMPT)
    steps = lab.steps
    billed = steps["usage_total_input"].notna()
    assert billed.all() and lab.calibration is not None
    fit = lab.calibration.fit()
    assert fit is not None
    # Each request's calibrated estimate is the fit applied to its own estimate.
    expected = [fit.calibrated(int(t)) for t in steps["total"]]
    assert list(steps["calibrated"]) == expected
    assert "calibration:" in lab.header.value
    assert list(lab.budget.trace("calibrated estimate")["y"]) == expected


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_a_compaction_the_session_ended_on_is_marked_after_its_last_request(
    tmp_path: Path, view: str
) -> None:
    import json

    def line(kind: str, content: object, **extra: object) -> str:
        message: dict[str, object] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=extra.pop("id"), model="m", usage={"input_tokens": 9})
        return json.dumps({"type": kind, "sessionId": "s", "message": message, **extra})

    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "sessionId": "s",
        "compactMetadata": {"trigger": "manual", "preTokens": 900},
    }
    path = tmp_path / "ended.jsonl"
    lines = [
        line("user", "Fix big.py."),
        line("assistant", [{"type": "text", "text": "Looking."}], id="m1"),
        line("user", "Go on."),
        line("assistant", [{"type": "text", "text": "Fixed."}], id="m2"),
        json.dumps(boundary),
        line("user", "This session is being continued. Summary: fixed.", isCompactSummary=True),
    ]
    path.write_text("\n".join(lines) + "\n")
    lab = await Lab.open(load(path), context_window=8_000, view=view)  # type: ignore[arg-type]
    assert list(lab.steps["recorded_compaction"]) == ["", "manual (after)"]
    marker = lab.budget.trace("recorded compaction")
    assert list(marker["x"]) == [1.5]
    assert list(marker["text"]) == [
        "recorded compaction (manual) after request 1: 900 → no request after it"
    ]


async def test_the_header_says_what_loading_left_out_and_repaired(tmp_path: Path) -> None:
    rollout = (
        Path(__file__).parents[1]
        / "fixtures"
        / "codex"
        / "rollout-2026-02-10T09-00-00-019a-demo.jsonl"
    )
    transcript = load(rollout)
    lab = await Lab.open(transcript, context_window=64_000, counter=ApproximateCounter())
    header = lab.header.value
    # The census's one line: what was read, used and skipped, what the transcript holds.
    assert transcript.census is not None
    assert html.escape(f"loaded: {transcript.census}") in header
    assert "skipped (" in header and "event user_message" in header
    history = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}],
        },
    ]
    lab = await Lab.open(
        load(history, format="anthropic"), context_window=64_000, counter=ApproximateCounter()
    )
    assert (
        "1 repair (added an error result for unanswered tool_use &#x27;a&#x27;)" in lab.header.value
    )


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_reading_a_recording_draws_its_panels_once_not_per_request(
    view: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[int | None] = []
    render = Lab._render_selection

    def counted(self: Lab) -> None:
        drawn.append(self.selected)
        render(self)

    monkeypatch.setattr(Lab, "_render_selection", counted)
    lab = await Lab.open(load(FIXTURE), context_window=200_000, view=view)  # type: ignore[arg-type]
    assert len(lab.log) == 5
    # Drawn at the end, on the last request (at every request, a long recording was n²).
    assert drawn == [4]
    assert not lab.reading
