"""A recording in the Lab: both views, the recorded compactions, the bill, progress, numbering,
code and widgets agreeing, and the static snapshot kept at the latest state."""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ipywidgets")

from ctxlab import ApproximateCounter, ContextConfig, load
from ctxlab.analysis._calibration import bill_flag
from ctxlab.analysis._replay import replay
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.tokens import TiktokenCounter, TokenCache
from ctxlab.widgets import Lab, _map
from ctxlab.widgets._lab_selection import CONTEXT_TAB
from ctxlab.widgets._recording import PROGRESS_SECONDS, progress_line
from tests.helpers import Displays

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.fixture
async def recorded() -> Lab:
    return await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")


async def test_as_recorded_the_requests_restart_from_the_recorded_summary(recorded: Lab) -> None:
    lab = recorded
    steps = lab.steps
    assert list(steps["step"]) == [0, 1, 2, 3, 4]
    assert list(steps["recorded_compaction"]) == ["", "", "", "manual", ""]
    # The request after the compaction holds the summary alone: what the file shows of it is
    # smaller than the one before (each also carries the unrecorded part, sized from the bill).
    shown = steps["total"] - steps["unrecorded"]
    assert shown[3] < shown[2] / 2 and (steps["unrecorded"] > 10_000).all()
    # The plot stacks it as its own area, named as the legend says it, under the rest.
    area = lab.budget.trace("unrecorded")
    assert area["name"] == "not recorded" and area["stackgroup"] == "tokens"
    assert list(area["y"]) == list(steps["unrecorded"]) and lab.budget.plot.data[0] is area
    assert list(steps["usage_total_input"]) == [14_230, 19_950, 20_056, 14_358, 14_414]
    # Calibrated against the bill, within 10 % here (no corpus needed).
    errors = abs(steps["calibrated"] - steps["usage_total_input"]) / steps["usage_total_input"]
    assert errors.max() < 0.10, errors.tolist()
    assert lab.calibration is not None and lab.calibration.median_error is not None
    # The Lab's rows carry each request's forecast out of sample, segment by segment (the
    # first request has nothing before it to be forecast from).
    forecasts = [row["forecast"] for row in lab.calibration.rows]
    assert forecasts[0] is None and pd.isna(steps["calibrated"][0])
    assert list(steps["calibrated"])[1:] == forecasts[1:]


async def test_the_header_says_what_the_file_does_not_record(recorded: Lab) -> None:
    header = recorded.header.value
    assert "view: <b>as recorded</b>" in header
    assert "not recorded (System prompt, tool schemas)" in header
    fit = recorded.calibration.fit() if recorded.calibration else None
    assert fit is not None
    sizes = sorted({round(f) for f in fit.fixed.values()})
    assert f"{sizes[0]:,}–{sizes[-1]:,} tokens a request — inferred from the bill" in header
    assert "out of sample (each request forecast from the requests before it)" in header
    assert "1 recorded compaction" in header


async def test_the_header_names_the_recorded_model_and_the_config_of_a_replay(
    recorded: Lab,
) -> None:
    header = recorded.header.value
    assert "model <code>claude-sonnet-4-6</code> (recorded)" in header
    assert "replay of" not in header
    recorded.agent.context_config = ContextConfig(trigger_ratio=0.6, reserve_ratio=0.2)
    await recorded.show_view("replayed")  # type: ignore[misc]
    header = recorded.header.value
    assert "view: <b>replayed under trigger_ratio 0.6, reserve_ratio 0.2</b>" in header
    assert "model <code>claude-sonnet-4-6</code> (recorded)" in header
    recorded.agent.context_config = ContextConfig.preset("agentscope")
    await recorded.replay()
    assert "view: <b>replayed under the preset &#x27;agentscope&#x27;</b>" in recorded.header.value


async def test_as_recorded_the_plot_draws_no_line_it_does_not_know(recorded: Lab) -> None:
    # The recorded agent's own notice and trigger are not in the file, and a recording has no
    # next request: no line at 0 jumping to the config's 160k/120k one x later.
    lab = recorded
    for name in ("usage notice", "trigger"):
        line = lab.budget.trace(name)
        assert list(line["x"]) == [0, 1, 2, 3, 4]
        assert all(y != y for y in line["y"]), (name, list(line["y"]))  # NaN: not drawn
    limit = lab.budget.trace("input limit")
    assert list(limit["y"]) == [200_000] * 5  # the window the recording is shown at
    assert lab.budget.plot.layout["annotations"] == []  # no "next request"
    assert lab.steps["trigger_tokens"].isna().all()
    # Replayed, every request has ctxlab's lines, and the next request's one x further.
    await lab.show_view("replayed")  # type: ignore[misc]
    trigger = lab.budget.trace("trigger")
    assert list(trigger["x"]) == [0, 1, 2, 3, 4, 5]
    assert list(trigger["y"]) == [lab.next_thresholds().trigger_tokens] * 6
    assert [a["text"] for a in lab.budget.plot.layout["annotations"]] == ["next request"]
    # In percent too: the recorded view's shares are of the window.
    await lab.show_view("recorded")  # type: ignore[misc]
    lab.budget.set_units("percent")
    lab._redraw()
    assert list(lab.budget.trace("input limit")["y"]) == [100.0] * 5


async def test_the_recorded_compaction_is_marked_on_the_plot_and_in_the_manifest(
    recorded: Lab,
) -> None:
    lab = recorded
    marker = lab.budget.trace("recorded compaction")
    assert list(marker["x"]) == [2.5]
    assert list(marker["y"]) == [14_358]  # the bill of the first request after it
    # The mark's own line, then whether it paid back (tests/widgets/test_break_even_shown.py).
    assert [t.split("<br>")[0] for t in marker["text"]] == [
        "recorded compaction (manual) before request 3: 20,900 → 14,358 billed"
    ]
    assert "<br>had not paid back when the session ended" in marker["text"][0]
    lab.select(3)
    header = lab.manifest.header.value
    assert "◆ recorded compaction" in header and "20,900 tokens before" in header
    assert "billed <b>14,358</b>" in header
    assert "not recorded (System prompt, tool schemas)" in header
    # The items say what they are: what the file does not hold and how its size is known, then
    # the summary's opening words, not a hash.
    whats = [row[2] for row in lab.manifest.table.rows]
    assert whats[0] == (
        "not recorded: System prompt, tool schemas (inferred from the bill (claude-sonnet-4-6, "
        "after recorded compaction 1))"
    )
    assert whats[1].startswith("user: This session is being continued")


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
    assert "view: <b>replayed under the defaults</b>" in lab.header.value
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


async def test_the_static_snapshot_follows_the_session(tmp_path: Path, displays: Displays) -> None:
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
    # Drawn but where flagged (more than 1.5 times off its bill, `bill_flag`), which the
    # header then names instead (`tests/widgets/test_calibration_flags.py`).
    flagged = dict(lab.log.flags())
    for step, why in flagged.items():
        assert why == bill_flag(steps["calibrated"][step], steps["usage_total_input"][step])
    assert ("flagged</b>" in lab.header.value) == bool(flagged)
    drawn = lab.budget.trace("calibrated estimate")
    assert list(drawn["x"]) == [n for n in range(len(expected)) if n not in flagged]
    assert list(drawn["y"]) == [e for n, e in enumerate(expected) if n not in flagged]


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
    # Drawn at the end, on the last request (at every request, a long recording was n²), and
    # after the plot: at the event loop's next turn, or when a panel is read before.
    assert drawn == []
    assert lab.manifest.table.total == len(lab.log.manifests[4].items)
    assert drawn == [4]
    await asyncio.sleep(0)
    assert drawn == [4]  # the turn's own render found it done
    assert not lab.reading


async def test_a_recording_opens_with_its_plot_and_fills_its_panels_at_the_next_turn() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000)
    # What the page draws first is there when `Lab.open` returns: every request on the plot,
    # the selection line on the last.
    assert len(lab.budget.plot.data[0]["x"]) == len(lab.log) == 5
    assert lab.selected == 4
    assert [s["x0"] for s in lab.budget.plot.layout["shapes"]] == [4]
    # The panels (read here under their own names, not to fill them) come at the next turn.
    assert (lab._manifest.table.total, lab._map.segments) == (0, [])
    await asyncio.sleep(0)
    assert lab._manifest.table.total == len(lab.log.manifests[4].items) > 0
    assert lab._map.segments
    assert "Request 4" in lab._manifest.header.value


async def test_a_recording_closed_before_its_panels_fill_them_never() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000)
    lab.close()
    await asyncio.sleep(0)
    assert lab._manifest.table.total == 0


async def test_a_tab_opened_before_the_panels_fill_draws_the_request_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review: a tab brought into view before the deferred render drew the request twice (its
    # render read `lab.map`, which filled the panels first, then drew them again).
    lab = await Lab.open(load(FIXTURE), context_window=200_000)
    shown: list[int] = []
    segments = _map.map_segments
    monkeypatch.setattr(_map, "map_segments", lambda i, s: shown.append(1) or segments(i, s))
    lab.tabs.selected_index = CONTEXT_TAB
    assert len(shown) == 1
    assert "<b>Request 4</b>" in lab._context.widget.value  # the tab drawn, the last request
    await asyncio.sleep(0)
    assert len(shown) == 1  # the turn's own render found it done


async def test_a_recording_without_usage_takes_a_stated_unrecorded_part() -> None:
    bare = load(FIXTURE)
    bare = bare.__class__(bare.name, {}, "", bare.messages)  # no usage: nothing to size it from
    excluded = await Lab.open(bare, context_window=200_000)
    assert "every figure here excludes them" in excluded.header.value
    assert (excluded.steps["unrecorded"] == 0).all()
    stated = await Lab.open(bare, context_window=200_000, unrecorded_tokens="claude_code")
    assert "profile &#x27;claude_code&#x27;" in stated.header.value
    assert (stated.steps["unrecorded"] == 18_800).all()
    assert list(stated.steps["total"]) == [t + 18_800 for t in excluded.steps["total"]]


async def test_the_header_lists_the_subagents_apart() -> None:
    real = Path(__file__).parents[1] / "fixtures" / "claude_code"
    lab = await Lab.open(
        real / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", context_window=200_000
    )
    assert "1 subagent apart, each with its own requests and bill" in lab.header.value
    assert len(lab.steps) == 20  # the main thread's requests only


async def test_at_a_window_the_session_never_fit_nothing_is_shown_as_fitting() -> None:
    # Every request of this session carried about 26k tokens the file does not hold: a 16k
    # window fits none of them.
    real = Path(__file__).parents[1] / "fixtures" / "claude_code"
    path = real / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    recorded = await Lab.open(path, context_window=16_000)
    assert (recorded.steps["validation"] == "budget_exceeded").all()
    recorded.select(0)
    assert "does not fit this window" in recorded.manifest.header.value
    replayed = await Lab.open(path, context_window=16_000, view="replayed")
    assert list(replayed.steps["validation"]) == ["budget_exceeded"]  # its first, and last
    assert "stopped at request 0" in replayed.controls.status.value
    assert "unrecorded part" in replayed.controls.status.value
    roomy = await Lab.open(path, context_window=200_000)
    assert (roomy.steps["validation"] == "passed").all()


async def test_the_header_says_in_a_line_what_the_file_holds_and_the_transcript_lacks(
    tmp_path: Path,
) -> None:
    # A chat file whose usage sits where the chat reader does not look (LangChain's metadata)
    # and whose reasoning field it does not read: the inventory finds both.
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "done", "reasoning_content": "Because <b>x</b>.",
         "response_metadata": {"token_usage": {"prompt_tokens": 5}}},
    ]  # fmt: skip
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    lab = await Lab.open(load(path), context_window=64_000, counter=ApproximateCounter())
    assert (
        "<b>unaccounted: 1 usage field, 1 reasoning text "
        "(at $[].reasoning_content, $[].response_metadata.token_usage)</b>"
    ) in lab.header.value
    # The control: a file whose reader places everything has no such line.
    whole = await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")
    assert "unaccounted:" not in whole.header.value


def test_reading_progress_is_said_at_most_once_a_quarter_second_and_at_the_end() -> None:
    now = [100.0]
    said: list[int] = []
    progress = progress_line(said.append, clock=lambda: now[0])
    for done in range(1, 5_001):
        now[0] += 0.0002  # 5,000 requests read in a second
        progress(done, 5_000)
    # The first request, then one line a quarter second (1,250 requests), and the last.
    assert said == [1, 1_251, 2_501, 3_751, 5_000]
    # A slow read says each request (every one a quarter second apart).
    slow: list[int] = []
    progress = progress_line(slow.append, clock=lambda: now[0])
    for done in range(1, 4):
        now[0] += PROGRESS_SECONDS
        progress(done, 10)
    assert slow == [1, 2, 3]
