"""Every renderer of text a user, a tool, a model or a file controls renders it inert: the
Lab's every panel at every request and tab, its header, snapshot and report, the what-if lab,
and the HTML reprs of the agent, manifests, configs and transcripts — live and over a
recording. A payload that reached any of them as markup fails here, in the unit suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")
import ipywidgets as w

from ctxlab import ApproximateCounter, ContextConfig, TextSource, Transcript, WhatIf
from ctxlab.agent import Agent
from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    ProviderUsage,
    TextBlock,
    UserMessage,
)
from ctxlab.models import ScriptedModel, tool_call
from ctxlab.widgets import Lab, WhatIfLab

XSS = '<img src=x onerror="alert(1)">'
RAW = ("<img", 'onerror="alert(1)">')


def _html_values(widget: Any) -> list[str]:
    """The markup of every HTML widget below ``widget`` (what the front end would insert)."""
    found: list[str] = []
    if isinstance(widget, w.HTML | w.HTMLMath):
        found.append(widget.value)
    for child in getattr(widget, "children", ()):
        found.extend(_html_values(child))
    return found


def _every_view(lab: Lab) -> list[str]:
    # Each request, in each tab, with each of its items opened: everything the Lab can show.
    pages: list[str] = [lab.snapshot_html()]
    for step in range(len(lab.log)):
        lab.select(step)
        for tab in range(len(lab.tabs.children)):
            lab.tabs.selected_index = tab
            pages.extend(_html_values(lab.widget))
        for item in lab.log.manifests[step].items:
            lab.open_item(item.id)
            pages.extend(_html_values(lab.widget))
    return pages


def _assert_inert(pages: list[str]) -> None:
    assert pages
    for page in pages:
        for raw in RAW:
            assert raw not in page, page[max(page.find(raw) - 200, 0) : page.find(raw) + 80]


def _document(text: str) -> DocumentBlock:
    return DocumentBlock(
        source={"type": "text", "media_type": "text/plain", "data": text}, title=XSS
    )


async def test_a_live_lab_renders_every_payload_inert(tmp_path: Path) -> None:
    def show(path: str) -> str:
        """Return a file."""
        return f"<html><body>{XSS} at {path}</body></html>"

    model = ScriptedModel(
        [tool_call("show", {"path": XSS}, id="call_1"), f"shown {XSS}"],
        name=f"model {XSS}",
    )
    agent = Agent(name=f"agent {XSS}", model=model, tools=[show], counter=ApproximateCounter())
    agent.context_source("notes", TextSource(f"notes {XSS}", id=XSS))  # the id is in the item's
    lab = Lab(agent)
    await lab.send(UserMessage(content=(TextBlock(text=f"read {XSS}"), _document(XSS))))  # type: ignore[arg-type]

    async def down(request: object) -> list[object]:
        raise RuntimeError(f"down {XSS}")

    # A source that fails the preparation: the failed manifest's error, in the Manifest tab.
    agent.context_source("status", down, on_failure="fail")
    assert await lab.send("again", raise_errors=False) is None
    assert lab.log.manifests[-1].error and XSS in lab.log.manifests[-1].error
    # A failure's message, in the status line.
    lab.controls.error(ValueError(f"bad {XSS}"))
    pages = _every_view(lab)
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    pages += [report, agent._repr_html_(), *(m._repr_html_() for m in agent.manifests)]
    assert any("&lt;img" in p for p in pages)  # the payload was shown, as text
    _assert_inert(pages)


async def test_a_recording_and_the_what_if_lab_render_every_payload_inert() -> None:
    messages = (
        UserMessage(content=(TextBlock(text=f"fix {XSS}"), _document(f"doc {XSS}"))),
        AssistantMessage(content=f"done {XSS}"),
        UserMessage(content=f"thanks {XSS}"),
        AssistantMessage(content="bye"),
    )
    # Billed usage: the calibrated figures and their note are shown too.
    usage = {1: ProviderUsage(4_000, 20), 3: ProviderUsage(4_100, 5)}
    transcript = Transcript(
        f"session {XSS}",
        {"source": XSS, "models": [f"claude {XSS}"]},
        f"system {XSS}",
        messages,
        usage=usage,
    )
    lab = await Lab.open(transcript, context_window=32_000, counter=ApproximateCounter())
    pages = _every_view(lab)
    await lab.show_view("replayed")
    pages += _every_view(lab)
    what = WhatIf(
        transcript,
        {f"config {XSS}": ContextConfig()},
        context_window=32_000,
        counter=ApproximateCounter(),
    )
    await what.run()
    whatif = WhatIfLab(what)
    pages += [*_html_values(whatif.widget), transcript._repr_html_(), ContextConfig()._repr_html_()]
    assert any("&lt;img" in p for p in pages)
    _assert_inert(pages)
