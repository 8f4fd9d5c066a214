"""What the costs are priced as is on screen: the what-if lab's table names the price (model,
list price, source) and cache rules, or says ``unpriced (model X has no known price)`` with
every cost cell ``unpriced`` — never a dash that reads as missing nor a $0; the Lab's report
names the price beside the session's cost, or says the session is unpriced."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, ContextConfig, load
from ctxlab.analysis._prices import price_for

pytest.importorskip("ipywidgets")

from ctxlab.widgets import Lab, WhatIfLab
from ctxlab.widgets._whatif_table import UNPRICED
from tests.analysis.whatif_figures import logs_session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
CONFIGS = {"ctxlab": ContextConfig.preset("ctxlab")}


def _cells(table: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S) for row in rows]


async def _lab(model: str, **keywords: object) -> WhatIfLab:
    session = dataclasses.replace(logs_session(), meta={"models": [model]})
    return await WhatIfLab.open(
        session,
        CONFIGS,
        context_window=8_000,
        counter=ApproximateCounter(),
        **keywords,  # type: ignore[arg-type]
    )


async def test_the_what_if_lab_names_the_price_its_costs_use() -> None:
    lab = await _lab("gemini-2.5-pro")
    note = re.search(r"<div class='ctxlab-pricing'[^>]*>(.*?)</div>", lab.table.value)
    assert note is not None
    assert html.unescape(note.group(1)) == f"costs: {lab.what.pricing}"
    assert note.group(1).startswith(
        "costs: gemini-2.5-pro at Google&#x27;s list price: $1.25 input, $10 output"
    )
    assert "ai.google.dev/gemini-api/docs/pricing" in note.group(1)
    assert UNPRICED not in lab.table.value


async def test_an_unpriced_model_is_said_in_the_what_if_lab_and_its_cells() -> None:
    lab = await _lab("my-llm-7b")
    page = lab.table.value
    assert (
        "<div class='ctxlab-pricing' style='color:#c00'>costs: unpriced (model "
        "&#x27;my-llm-7b&#x27; has no known price)</div>"
    ) in page
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page)
    (row,) = [r for r in _cells(page) if r]
    by_header = dict(zip(headers[1:], row[1:], strict=True))
    for header in ("cost (USD)", "cost_vs_baseline", "cost_vs_no_compaction"):
        assert by_header[header] == UNPRICED, header
    assert by_header["tokens_sent"] not in (UNPRICED, "–")  # the tokens are known
    assert lab.plot.layout["yaxis2"]["title"]["text"] == "cost: unpriced (no known price)"


async def test_a_price_passed_to_the_what_if_lab_prices_an_unknown_model() -> None:
    lab = await _lab("my-llm-7b", price=price_for("claude-sonnet-4-6"))
    page = lab.table.value
    assert "costs: my-llm-7b priced as claude-sonnet-4-6 at Anthropic&#x27;s" in page
    assert UNPRICED not in page


async def test_the_report_names_the_price_beside_the_sessions_cost(tmp_path: Path) -> None:
    lab = await Lab.open(load(FIXTURE), context_window=200_000, view="recorded")
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    total = sum(float(c) for c in lab.steps["cost"])
    assert total > 0
    found = re.search(r"<p class='ctxlab-pricing'>cost: \$([\d,.]+) over (\d+) requests", report)
    assert found is not None
    assert float(found.group(1).replace(",", "")) == pytest.approx(total, abs=5e-5)
    assert int(found.group(2)) == len(lab.steps)
    model = lab.log.model
    assert model.startswith("claude-")
    assert f"{html.escape(price_for(model).label)}" in report


async def test_the_report_of_an_unpriced_recording_says_so_never_zero(tmp_path: Path) -> None:
    session = load(FIXTURE)
    # Every reply of a model no table knows (each request as recorded costs its bill at its
    # own model's price: the per-reply models too).
    replies = {rank: "my-llm-7b" for rank in session.meta["reply_models"]}
    meta = {**session.meta, "models": ["my-llm-7b"], "reply_models": replies}
    unknown = dataclasses.replace(session, meta=meta)
    lab = await Lab.open(unknown, context_window=200_000, view="recorded")
    report = lab.report(tmp_path / "report.html").read_text(encoding="utf-8")
    assert (
        "<p class='ctxlab-pricing' style='color:#c00'>cost: unpriced (model "
        "&#x27;my-llm-7b&#x27; has no known price)</p>"
    ) in report
    assert "cost: $0" not in report
    assert lab.steps["cost"].isna().all()


async def test_a_live_lab_on_a_model_of_no_known_price_says_its_steps_are_unpriced(
    tmp_path: Path,
) -> None:
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    lab = Lab(demo_agent(tmp_path / "ws"))
    await lab.send(DEMO_PROMPT)
    steps = lab.steps
    assert len(steps) > 0 and steps["cost"].isna().all()
    assert lab.log.pricing_note == "unpriced (model 'ctxlab-demo' has no known price)"
    # Control: the same session with a price passed is priced, and says whose price it is.
    priced = Lab(lab.agent, price=price_for("claude-sonnet-4-6"))
    assert (priced.steps["cost"] > 0).all()
    assert priced.log.pricing_note.startswith("ctxlab-demo priced as claude-sonnet-4-6 at")
