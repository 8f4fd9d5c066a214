"""The what-if lab, driven from Python: curves, table, sliders, selected step, diff."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript
from ctxlab.manifest import ProviderUsage
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

pytest.importorskip("ipywidgets")

from ctxlab.widgets import WhatIfLab


def _session(turns: int = 24) -> Transcript:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read every log.")]
    usage = {}
    for n in range(turns):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat /var/log/app{n}.log"})
        usage[len(messages)] = ProviderUsage(10, 5, 300 * n, 300)
        messages.append(AssistantMessage(content=(use,)))
        text = f"<b>app{n}</b> request {1000 + n} failed\n" * 60
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=text),)))
    usage[len(messages)] = ProviderUsage(10, 5, 300 * turns, 300)
    messages.append(AssistantMessage(content="All read."))
    return Transcript("logs <script>", {}, "You read logs.", tuple(messages), usage=usage)


async def _lab() -> WhatIfLab:
    return await WhatIfLab.open(_session(), context_window=8_000, counter=ApproximateCounter())


async def test_curves_table_and_usage_for_every_config() -> None:
    lab = await _lab()
    names = [t["name"] for t in lab.plot.data]
    configs = ["ctxlab", "agentscope", "observation_masking"]
    assert names == [*(n for c in configs for n in (c, f"{c} cost")), "billed (as recorded)"]
    assert all(len(t["x"]) == 25 for t in lab.plot.data)
    cost = lab.plot.data[1]
    assert cost["yaxis"] == "y2" and list(cost["y"]) == sorted(cost["y"])
    assert cost["y"][-1] == pytest.approx(lab.what.table().loc["ctxlab", "cost"])
    assert lab.plot.data[-1]["y"][1] == 10 + 300 + 300
    for name in ("ctxlab", "agentscope", "observation_masking", "cost_vs_baseline", "cost (USD)"):
        assert name in lab.table.value
    # Under the table, in a sentence: does any config beat the feasible baseline (escaped)?
    import html

    verdict = lab.what.verdict()
    assert verdict.startswith("With the window at 8,000 tokens")
    assert f"ctxlab-verdict' style='color:#555'>{html.escape(verdict)}</div>" in lab.table.value
    # The hover reads "request 3", tokens in full; the axis fits the configs' curves.
    assert lab.plot.layout["xaxis"]["unifiedhovertitle"]["text"] == "request %{x}"
    assert lab.plot.data[0]["hovertemplate"].startswith("%{y:,} tokens")
    peak = max(m.estimated_input_tokens for r in lab.what.runs.values() for m in r.manifests)
    assert lab.plot.layout["yaxis"]["range"] == [0, pytest.approx(peak * 1.1)]
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
    lab.diff_b.value = "ctxlab"
    assert "pick two configs" in lab.diff.value


async def test_without_a_kernel_the_comparison_table_shows() -> None:
    lab = await _lab()
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    assert "cost_vs_no_compaction" in page and "observation_masking" in page
    assert "<script" not in page  # the session's name is escaped
