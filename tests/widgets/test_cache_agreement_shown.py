"""The cache model's agreement with the bill is on screen: one line in the Lab's header (and
its static snapshot), and in the report with every request that disagrees and why — the
figure the same as an independent bill's (`tests.analysis.raw_claude_bill`) reads against the
recorded ones; nothing for a recording without cache usage."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage

pytest.importorskip("ipywidgets")

from ctxlab.widgets import Lab
from tests.analysis.raw_claude_bill import bill, read_session

REAL = (
    Path(__file__).parents[1]
    / "fixtures"
    / "claude_code"
    / ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
)


def _independent_agreement(path: Path) -> tuple[int, int, list[int]]:
    """Agreeing, compared and disagreeing requests, by the independent bill's reads."""
    requests = read_session(path)
    disagreeing = [
        n
        for n, (request, billed) in enumerate(zip(requests, bill(requests), strict=True))
        if abs(billed.read - request.read)
        > 0.02 * (request.read if request.read else request.billed)
    ]
    return len(requests) - len(disagreeing), len(requests), disagreeing


async def test_the_header_and_report_show_the_agreement_and_the_requests_that_disagree(
    tmp_path: Path,
) -> None:
    agreeing, compared, disagreeing = _independent_agreement(REAL)
    assert (agreeing, compared, disagreeing) == (19, 20, [0])
    lab = await Lab.open(REAL, context_window=1_000_000)
    line = (
        f"cache model: reads within 2 % of the bill on {100 * agreeing // compared} % of "
        f"requests ({agreeing} of {compared}); disagreeing: request 0 "
        "(recording.cache_check() says why)"
    )
    assert html.escape(line) in lab.header.value
    assert html.escape(line) in lab.snapshot_html()
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h3>Checked against the bill</h3>" in report
    assert (
        html.escape(
            "; as recorded, 20 priced from their recorded usage (the bill, each at its own model's "
            "price), 0 by the cache model</p>"
        ).replace("&lt;/p&gt;", "</p>")
        in report
    )
    assert (
        "<tr><td style='padding:2px 6px'>0</td><td style='padding:2px 6px'>the first request "
        "of its model here: its prefix was cached before (kept warm by another session, or by "
        "the parent of a subagent)</td></tr>"
    ) in report
    lab.close()


async def test_a_recording_without_cache_usage_shows_no_agreement_line(tmp_path: Path) -> None:
    messages = (
        UserMessage(content="question " + "word " * 300),
        AssistantMessage(content="answer"),
        UserMessage(content="again"),
        AssistantMessage(content="answer again"),
    )
    usage = {1: ProviderUsage(5_000, 10), 3: ProviderUsage(5_100, 10)}
    plain = Transcript("plain", {"models": ["claude-sonnet-4-5"]}, "", messages, usage=usage)
    lab = await Lab.open(plain, context_window=200_000)
    assert "cache model:" not in lab.header.value
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Checked against the bill" not in report
    # Its costs are its bills all the same: 5,000 and 5,100 input at $3, 10 output at $15.
    assert list(lab.steps["priced_from"]) == ["usage", "usage"]
    assert lab.steps["cost"].sum() == pytest.approx((10_100 * 3 + 20 * 15) / 1e6)
    lab.close()
