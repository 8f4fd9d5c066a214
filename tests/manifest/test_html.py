"""Static HTML and short reprs: what a notebook shows without a kernel."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, ScriptedModel, Transcript
from ctxlab.agent import Agent
from ctxlab.messages import AssistantMessage, UserMessage
from tests.helpers import lines_of, manifest_of

XSS = "<img src=x onerror=alert(1)>"


async def _agent() -> Agent:
    agent = Agent(
        name=f"agent {XSS}", model=ScriptedModel(["one", "two"]), counter=ApproximateCounter()
    )
    await agent(f"hello {XSS}")
    await agent("again")
    return agent


async def test_a_manifest_is_short_as_text_and_whole_as_html() -> None:
    manifest = (await _agent()).manifests[-1]
    text = repr(manifest)
    assert len(text) < 200 and "items" in text and "passed" in text
    page = manifest._repr_html_()
    assert "conversation" in page and f"{manifest.estimated_input_tokens:,}" in page
    assert all(item.id in page for item in manifest.items)


def test_a_config_shows_what_differs_from_the_defaults() -> None:
    page = ContextConfig(trigger_ratio=0.6)._repr_html_()
    assert "<b>0.6</b>" in page and "Trigger ratio" in page
    assert "<b>0.1</b>" not in page  # the reserve ratio is the default


def test_a_transcript_at_a_glance_escapes_what_it_quotes() -> None:
    transcript = Transcript(
        f"session {XSS}",
        {"source": "claude_code"},
        "",
        (UserMessage(content=f"fix {XSS}"), AssistantMessage(content="ok")),
    )
    assert repr(transcript).startswith("Transcript('session")
    page = transcript._repr_html_()
    assert "claude_code" in page and XSS not in page and "&lt;img" in page


async def test_the_lab_carries_a_static_snapshot_beside_the_widget() -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    lab = Lab(await _agent())
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    assert "2 requests" in page and page.count("■") >= 6
    assert XSS not in page and "&lt;img" in page
    assert bundle["text/plain"].startswith("Lab(")


async def test_a_lab_writes_a_self_contained_report(tmp_path: object) -> None:
    pytest.importorskip("ipywidgets")
    from pathlib import Path

    from ctxlab.widgets import Lab

    lab = Lab(await _agent())
    path = lab.report(Path(str(tmp_path)) / "session.html")
    page = path.read_text()
    assert page.startswith("<!doctype html>") and "<script" not in page
    assert page.count("<details") == 2 and "request 1" in page
    assert XSS not in page


async def test_an_agent_at_a_glance() -> None:
    agent = await _agent()
    page = agent._repr_html_()
    assert "&lt;img" in page and XSS not in page
    assert "4 messages" in page and "requests prepared" in page
    assert f"{agent.manifests[-1].estimated_input_tokens:,}" in page


def test_a_long_session_says_how_much_of_it_the_static_plot_shows() -> None:
    from ctxlab.manifest import ContextManifest
    from ctxlab.widgets._snapshot import steps_html

    def manifest(n: int) -> ContextManifest:
        return manifest_of(
            (), request_id=f"r{n}", estimated_input_tokens=100 + n, input_limit=1_000
        )

    long = steps_html([manifest(n) for n in range(217)])
    assert "the last 40 of 217 requests (requests 177 to 216)" in long
    assert ">216<" in long and ">176<" not in long  # the rows are the last 40, numbered as such
    assert "the last" not in steps_html([manifest(n) for n in range(12)])
    # A report shows every request.
    every = steps_html([manifest(n) for n in range(217)], limit=None)
    assert "the last" not in every and ">0<" in every and ">216<" in every
    assert every.count("width:6.5em") == 217
    # No table for a theme to restyle: the rows are flex boxes.
    assert "<table" not in long and "display:flex" in long


def test_threshold_lines_are_rounded_not_truncated() -> None:
    from ctxlab.manifest import Thresholds

    lines = Thresholds.compute(
        ContextConfig(trigger_ratio=0.3, context_buffer_ratio=0.2, reserve_ratio=0.1), 200_000
    )
    # (0.3 − 0.2) × 200,000 is 19,999.999… in floating point.
    assert lines.notice_tokens == 20_000 and lines.reserve_tokens == 20_000
    assert lines.trigger_tokens == 60_000


def test_every_transform_explains_itself_from_its_kind() -> None:
    from ctxlab.manifest import TRANSFORM_KINDS, Transform
    from ctxlab.manifest._explain import explain_transform

    manifest = manifest_of((), input_limit=9_000, thresholds=lines_of())

    def why(kind: str, **fields: object) -> str:
        return explain_transform(Transform(kind, **fields), manifest)  # type: ignore[arg-type]

    assert why("tool_result_truncation", tokens_before=9_000, tokens_after=500) == (
        "cut from 9,000 to 500 tokens: over the tool result limit"
    )
    assert why("tool_result_offload", detail="out/x.txt", tokens_after=120) == (
        "written to out/x.txt; a preview of 120 tokens stays"
    )
    assert why("tool_result_offload", tokens_after=120).startswith("written to the workspace")
    assert why("history_compaction", target="m/1", tokens_before=9_100, tokens_after=900) == (
        "m/1 summarized, 9,100 → 900 tokens: the request reached the trigger (8,000 tokens, "
        "80 % of the window)"
    )
    # On demand (review of stop 64): the rule that asked, not a trigger the request never reached.
    asked = why("history_compaction", target="m/1", detail="task", tokens_before=2_100)
    assert asked == "m/1 summarized, 2,100 → ? tokens: the on-demand rule 'task' asked for it"
    assert why("recorded_compaction", target="after", detail="manual", tokens_before=24_100) == (
        "the recorded session's own compaction (manual) after this request, the session's "
        "last: 24,100 tokens before, by the recording"
    )
    assert why("summary_failed", detail="boom") == "summary failed (failure): boom"
    # Every kind's template fills without a missing field.
    for kind in TRANSFORM_KINDS:
        assert why(kind, target="t", detail="d", tokens_before=2, tokens_after=1)
