"""The what-if lab, driven from Python: curves, table, sliders, selected step, diff."""

from __future__ import annotations

import pandas as pd
import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._comparison import WHOLE_SESSION
from ctxlab.messages import ToolResultBlock, UserMessage

pytest.importorskip("ipywidgets")

from ctxlab.widgets import WhatIfLab
from tests.analysis.whatif_figures import logs_session


def _session(turns: int = 24) -> Transcript:
    # Tool output with markup (shown escaped) and a name with a script tag.
    return logs_session(turns, "<b>app{n}</b> request {r} failed", "logs <script>")


async def _lab() -> WhatIfLab:
    return await WhatIfLab.open(_session(), context_window=8_000, counter=ApproximateCounter())


async def test_curves_table_and_usage_for_every_config() -> None:
    lab = await _lab()
    names = [t["name"] for t in lab.plot.data]
    configs = ["ctxlab", "agentscope", "observation_masking"]
    curves = [*(n for c in configs for n in (c, f"{c} cost")), "billed (as recorded)"]
    assert names == [*curves, "input limit"]
    assert all(len(t["x"]) == 25 for t in lab.plot.data if t["name"] in curves)
    limit = lab.what.runs["ctxlab"].manifests[0].input_limit
    assert list(lab.plot.trace("input limit")["y"]) == [limit, limit]
    cost = lab.plot.data[1]
    assert cost["yaxis"] == "y2" and list(cost["y"]) == sorted(cost["y"])
    assert cost["y"][-1] == pytest.approx(lab.what.table().loc["ctxlab", "cost"])
    assert lab.plot.trace("billed (as recorded)")["y"][1] == 10 + 300 + 300
    for name in ("ctxlab", "agentscope", "observation_masking", "cost_vs_baseline", "cost (USD)"):
        assert name in lab.table.value
    # Under the table, in a sentence: does any config beat the feasible baseline (escaped)?
    import html

    verdict = lab.what.verdict()
    assert verdict.startswith("With the window at 8,000 tokens")
    assert f"ctxlab-verdict' style='color:#555'>{html.escape(verdict)}</div>" in lab.table.value
    # The hover reads "request 3", tokens in full; the axis holds every line: the configs',
    # the bill (here above the configs' peak: it falls off a chart cut at their peak) and the
    # limit.
    assert lab.plot.layout["xaxis"]["unifiedhovertitle"]["text"] == "request %{x}"
    assert lab.plot.data[0]["hovertemplate"].startswith("%{y:,} tokens")
    peak = max(m.estimated_input_tokens for r in lab.what.runs.values() for m in r.manifests)
    billed = max(lab.plot.trace("billed (as recorded)")["y"])
    assert billed > peak and billed == 10 + 300 * 24 + 300
    top = lab.plot.layout["yaxis"]["range"][1]
    assert top == pytest.approx(max(billed, peak, limit) * 1.08)
    assert lab.plot.layout["yaxis2"]["rangemode"] == "tozero"
    # The table scrolls in a box of the output's width (it ran out of the output area).
    assert lab.table.value.startswith("<div class='ctxlab-scroll'")
    assert "&lt;script&gt;" in lab.widget.children[0].value  # the session's name, escaped


async def test_a_slider_replays_its_config_and_redraws() -> None:
    lab = await _lab()
    before = list(lab.plot.data[0]["y"])
    lab.config_picker.value = "ctxlab"
    lab.sliders["trigger_ratio"].value = 0.4
    assert lab.task is not None
    await lab.task
    after = list(lab.plot.data[0]["y"])
    assert after != before and max(after) < max(before)
    assert lab.what.runs["ctxlab"].config.trigger_ratio == 0.4
    assert "ctxlab: replayed 25 requests" in lab.status.value
    # Another config's sliders show its own values.
    lab.config_picker.value = "agentscope"
    assert lab.sliders["trigger_ratio"].value == 0.8


async def test_tuning_from_code_moves_the_sliders() -> None:
    lab = await _lab()
    lab.config_picker.value = "agentscope"
    await lab.tune("ctxlab", trigger_ratio=0.6)
    # The widgets show what code changed: the tuned config is picked, its slider reads 0.6.
    assert lab.config_picker.value == "ctxlab"
    assert lab.sliders["trigger_ratio"].value == 0.6
    assert lab.task is None  # loading the sliders did not start another replay


async def test_an_invalid_combination_is_shown_and_changes_nothing() -> None:
    lab = await _lab()
    await lab.tune("ctxlab", reserve_ratio=0.85, trigger_ratio=0.5)
    assert "reserve" in lab.status.value.lower()
    assert lab.what.runs["ctxlab"].config == ContextConfig.preset("ctxlab")


async def test_a_step_opens_in_the_manifest_panel_and_two_configs_diff() -> None:
    lab = await _lab()
    lab.step_config.value = "agentscope"
    lab.step.value = 20
    assert "20" in lab.manifest.header.value
    labels = [row[2] for row in lab.manifest.table.rows]
    assert any(label.startswith("tool call bash") for label in labels)  # not bare hashes
    lab.diff_a.value, lab.diff_b.value = "ctxlab", "observation_masking"
    assert "only in ctxlab" in lab.diff.value and "only in observation_masking" in lab.diff.value
    # What was dropped, readable: kind, source, a preview of the text (escaped), tokens.
    frame = lab.what.diff("ctxlab", "observation_masking", 20)
    assert list(frame.columns[:5]) == ["side", "kind", "source", "what", "tokens"]
    dropped = frame[frame["what"].str.startswith("tool result of bash: <b>app")]
    assert len(dropped) > 0 and (dropped["kind"] == "message").all()
    assert (dropped["source"] == "user").all() and (dropped["tokens"] > 0).all()
    assert "tool result of bash: &lt;b&gt;app" in lab.diff.value and "<b>app" not in lab.diff.value
    lab.diff_b.value = "ctxlab"
    assert "pick two configs" in lab.diff.value


async def test_without_a_kernel_the_comparison_table_shows() -> None:
    lab = await _lab()
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    assert "cost_vs_no_compaction" in page and "observation_masking" in page
    assert "<script" not in page  # the session's name is escaped


async def test_a_replay_that_fails_part_way_is_not_priced_as_the_whole_session() -> None:
    # Truncation drops old turns but cannot cut a result: at the turn whose log alone is over
    # the limit, its replay stops part way. Its few requests must not read as the cheapest.
    session = _session()
    huge = "worker-3 ERROR request failed\n" * 2_000
    messages = list(session.messages)
    messages[22] = UserMessage(content=(ToolResultBlock(tool_use_id="c10", content=huge),))
    session = Transcript(
        session.name, session.meta, session.system, tuple(messages), usage=session.usage
    )
    what = WhatIf(
        session,
        {
            "ctxlab": ContextConfig.preset("ctxlab"),
            "trunc": ContextConfig.preset("openai_truncation"),
        },
        context_window=8_000,
        counter=ApproximateCounter(),
    )
    await what.run()
    run = what.runs["trunc"]
    assert run.error and 0 < len(run.steps) < 25
    table = what.table()
    assert table.loc["trunc", "failed_at"] == len(run.steps)
    assert pd.isna(table.loc["ctxlab", "failed_at"])
    for column in WHOLE_SESSION:
        assert pd.isna(table.loc["trunc", column]), column
        assert table.loc["ctxlab", column] > 0, column
    assert pd.isna(table.loc["trunc", "tokens_sent_calibrated"])
    # Ranked by cost, it is not first: it has no cost.
    assert table["cost"].dropna().index.tolist() == ["ctxlab"]
    lab = WhatIfLab(what)
    assert f"trunc: the replay stopped at request {len(run.steps)} of 25" in lab.table.value


async def test_the_header_says_what_the_recording_does_not_hold() -> None:
    lab = await _lab()
    # The session records its System prompt but no tool schemas, and has usage: the schemas'
    # size comes from the bill, and the header says so, escaped.
    assert lab.what.unrecorded is not None
    assert "not recorded (tool schemas)" in lab.header.value
    assert "inferred from the bill" in lab.header.value
    assert "logs &lt;script&gt;" in lab.header.value


async def test_the_status_line_shows_names_and_errors_as_text() -> None:
    # A config's name and a refused value are the user's text: shown escaped, never as markup.
    odd = "<img src=x onerror=alert(1)>"
    lab = await WhatIfLab.open(
        _session(), {odd: ContextConfig()}, context_window=8_000, counter=ApproximateCounter()
    )
    await lab.tune(odd, trigger_ratio=0.6)
    assert "&lt;img src=x onerror=alert(1)&gt;: replayed 25 requests" in lab.status.value
    assert "<img" not in lab.status.value
    await lab.tune(odd, compaction={"instructions": odd, "trigger_messages": "<b>many</b>"})
    assert "&lt;b&gt;many&lt;/b&gt;" in lab.status.value
    assert "<b>" not in lab.status.value


async def test_the_input_limit_line_is_the_engines_even_when_no_config_fits() -> None:
    # A first request larger than the window: no config prepares a request, yet the
    # references were priced against a limit, and the plot draws the one the engine used.
    from ctxlab.manifest import Thresholds
    from ctxlab.messages import AssistantMessage, TextBlock

    huge = Transcript(
        name="huge",
        meta={},
        system="",
        messages=(
            UserMessage(content=(TextBlock(text="word " * 40_000),)),
            AssistantMessage(content=(TextBlock(text="ok"),)),
        ),
    )
    lab = await WhatIfLab.open(huge, context_window=8_000, counter=ApproximateCounter())
    assert not any(run.prepared for run in lab.what.runs.values())
    limit = Thresholds.compute(ContextConfig.preset("ctxlab"), 8_000).input_limit
    assert list(lab.plot.trace("input limit")["y"]) == [limit, limit] == [6_840, 6_840]
