"""Where a Lab shows whether a compaction paid back: the hover of its marker on the budget plot
(◆ a recording's own, ★ ctxlab's) and the report — each figure recomputed here from the Lab's
own priced requests, each text escaped."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, load
from ctxlab.analysis._prices import price_for
from ctxlab.messages import AssistantMessage

pytest.importorskip("ipywidgets")

from ctxlab.widgets import Lab, WhatIfLab
from tests.analysis.test_breakeven_whatif import session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def _timed(transcript: Transcript, gap_before: int, gap: float) -> Transcript:
    """Replies 30 s apart, with ``gap`` seconds before reply number ``gap_before``."""
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    times, now = {}, 1_700_000_000.0
    for rank, index in enumerate(replies):
        now += gap if rank == gap_before else 30.0
        times[index] = now
    return dataclasses.replace(transcript, times=times)


def _hover(lab: Lab, marker: str) -> list[str]:
    return list(lab.budget.trace(marker)["text"])


async def test_a_recorded_compactions_marker_says_it_had_not_paid_back() -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")
    costs = lab.log._sent_costs()
    # The recording's /compact falls before request 3: it removed what request 2 held and
    # answered, less what request 3 holds.
    removed = costs[2].input_tokens + costs[2].output - costs[3].input_tokens
    price = price_for(lab.log.model)
    saving = removed * price.cache_read / 1_000_000
    (even,) = lab.log.break_evens()
    assert (even.request, even.removed) == (3, removed) and removed > 0
    assert even.saved == pytest.approx(saving)  # one request after it, request 4
    assert even.cost > saving and even.paid_back_at is None
    (text,) = _hover(lab, "recorded compaction")
    assert text.startswith("recorded compaction (manual) before request 3:")
    assert f"<br>had not paid back when the session ended: ${saving:,.4f} of" in text


async def test_after_a_long_idle_gap_the_marker_says_it_cost_nothing_extra() -> None:
    # 45 minutes before the first request after the /compact: Anthropic's cache (5 minutes)
    # had expired.
    lab = await Lab.open(_timed(load(FIXTURE), 3, 45 * 60), context_window=200_000, view="recorded")
    (even,) = lab.log.break_evens()
    assert even.cold and even.gap == 45 * 60 and even.rewritten == 0
    (text,) = _hover(lab, "recorded compaction")
    assert (
        "<br>cost nothing extra: made in a 45-minute idle gap, longer than the cache&#x27;s "
        "5-minute lifetime (the cache had expired)<br>paid back at request 3 (at once"
    ) in text


async def test_a_recorded_trigger_is_escaped_in_the_hover() -> None:
    recorded = load(FIXTURE)
    hostile = [
        {**c, "trigger": "<img src=x onerror=alert(1)>"} for c in recorded.meta["compactions"]
    ]
    lab = await Lab.open(
        dataclasses.replace(recorded, meta={**recorded.meta, "compactions": hostile}),
        context_window=200_000,
        view="recorded",
    )
    (text,) = _hover(lab, "recorded compaction")
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


async def test_ctxlab_compactions_say_it_on_the_star_and_in_the_report(tmp_path: Path) -> None:
    lab = await Lab.open(
        session(),
        context_window=8_000,
        counter=ApproximateCounter(),
        view="replayed",
    )
    evens = lab.log.break_evens()
    assert len(evens) == len(lab.log.compactions) >= 2
    hovers = _hover(lab, "compaction")
    for even, text in zip(evens, hovers, strict=True):
        assert text.startswith(f"automatic summary in request {even.request}:")
        # The replay's summaries are made offline: the break is the request after alone.
        assert even.summary_cost == 0
        said = (
            f"<br>re-wrote {even.rewritten:,} cached tokens: the break cost ${even.cost:,.4f}<br>"
        )
        assert said in text
        assert ("<br>paid back at request" in text) == even.paid_back
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    paid = sum(e.paid_back for e in evens)
    assert f"Compactions: {paid} of {len(evens)} paid back the cache they broke" in report
    assert f"<li>request {evens[0].request} · automatic summary: " in report


@pytest.mark.parametrize(
    ("model", "shown"), [("claude-sonnet-4-6", "0 of 3"), ("my-llm", "unpriced")]
)
async def test_the_what_if_labs_table_says_how_many_paid_back(model: str, shown: str) -> None:
    transcript = dataclasses.replace(session(), meta={"models": [model]})
    lab = await WhatIfLab.open(
        transcript,
        {"ctxlab": ContextConfig.preset("ctxlab")},
        context_window=8_000,
        counter=ApproximateCounter(),
    )
    headers = re.findall(r"<th[^>]*>(.*?)</th>", lab.table.value)
    (row,) = [r for r in re.findall(r"<tr>(.*?)</tr>", lab.table.value) if "<td>" in r]
    cells = dict(zip(headers, re.findall(r"<td[^>]*>(.*?)</td>", row), strict=True))
    assert cells["compactions"] == "3"
    assert cells["compactions_paid_back"] == shown
    if model.startswith("claude"):
        assert lab.what.table().loc["ctxlab", "compactions_paid_back"] == shown
