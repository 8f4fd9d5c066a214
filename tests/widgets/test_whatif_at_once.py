"""A slider answered at once: the what-if lab redraws the tuned config's token line and its
headline figures from the replay alone, says retention and cost are coming, then fills them in
— every value the one a what-if replayed from the start under that config gives."""

from __future__ import annotations

import asyncio
import html
import re

import pytest

from ctxlab import ApproximateCounter, ContextConfig, WhatIf
from ctxlab.analysis._comparison import HEADLINE_COLUMNS
from tests.analysis.whatif_figures import logs_session

pytest.importorskip("ipywidgets")

from ctxlab.widgets import WhatIfLab
from ctxlab.widgets._whatif_table import COMPUTING, SHOWN_COLUMNS, _cell

WINDOW = 8_000


def _row(lab: WhatIfLab, name: str) -> dict[str, str]:
    """The comparison table's row of ``name``, as shown (unescaped), by column."""
    for row in re.findall(r"<tr>(.*?)</tr>", lab.table.value.split("<tbody>")[1]):
        cells = [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        if cells[0] == name:
            return dict(zip(SHOWN_COLUMNS, cells[1:], strict=True))
    raise AssertionError(f"no row {name}")


async def _fresh(config: ContextConfig) -> WhatIf:
    what = WhatIf(
        logs_session(), {"ctxlab": config}, context_window=WINDOW, counter=ApproximateCounter()
    )
    await what.run()
    return what


def _spent(what: WhatIf) -> list[float]:
    """USD spent up to each request, from the priced requests in the order sent (a summary
    call counted with the request after it), summed here."""
    out, total = [], 0.0
    for cost in what.runs["ctxlab"].costs:
        total += cost.cost
        if cost.purpose != "summary":
            out.append(total)
    assert total == pytest.approx(what.table().loc["ctxlab", "cost"])
    return out


async def _moved(lab: WhatIfLab, value: float) -> None:
    """Move the trigger slider as a user does; return once the plot changed."""
    before = list(lab.plot.data[0]["y"])
    lab.sliders["trigger_ratio"].value = value
    for _ in range(1_000):
        await asyncio.sleep(0)
        if list(lab.plot.data[0]["y"]) != before:
            return
    raise AssertionError("the plot never changed")


async def test_the_lines_and_headline_come_first_then_retention_and_cost() -> None:
    lab = await WhatIfLab.open(logs_session(), context_window=WINDOW, counter=ApproximateCounter())
    other = _row(lab, "agentscope")
    assert lab.computing.value == ""
    lab.config_picker.value = "ctxlab"
    tuned = ContextConfig.preset("ctxlab").model_copy(update={"trigger_ratio": 0.4})
    fresh = await _fresh(tuned)
    full = fresh.table()
    await _moved(lab, 0.4)
    # At once: the token line and the headline figures, each the full replay's.
    tokens = [m.estimated_input_tokens for m in fresh.runs["ctxlab"].manifests]
    assert list(lab.plot.trace("ctxlab")["y"]) == tokens
    row = _row(lab, "ctxlab")
    for column in HEADLINE_COLUMNS:
        assert row[column] == _cell(full.loc["ctxlab", column]), column
    # Retention and cost are coming, and say so; the other configs keep their figures.
    assert row["cost"] == row["retention"] == row["tokens_sent"] == COMPUTING
    assert "retention and cost of ctxlab: computing…" in lab.computing.value
    assert list(lab.plot.trace("ctxlab cost")["y"]) == []
    assert _row(lab, "agentscope") == other
    run = lab.what.runs["ctxlab"]
    assert not run.graded and not run.priced
    # Then filled in: every figure the full replay's, the cost line too, the note gone.
    assert lab.task is not None
    await lab.task
    row = _row(lab, "ctxlab")
    for column in SHOWN_COLUMNS:
        assert row[column] == _cell(full.loc["ctxlab", column]), column
    assert row["retention"] != COMPUTING and row["cost"] != COMPUTING
    assert list(lab.plot.trace("ctxlab cost")["y"]) == pytest.approx(_spent(fresh), rel=1e-12)
    assert lab.computing.value == ""
    assert "ctxlab-verdict" in lab.table.value


async def test_a_newer_move_takes_over_from_one_still_computing() -> None:
    lab = await WhatIfLab.open(logs_session(), context_window=WINDOW, counter=ApproximateCounter())
    lab.config_picker.value = "ctxlab"
    await _moved(lab, 0.4)
    first = lab.task
    assert first is not None and lab.filling is not None
    filling = lab.filling
    await _moved(lab, 0.6)
    await asyncio.sleep(0)
    assert filling.cancelled()  # the first move's retention and cost are no longer computed
    assert lab.task is not None
    await lab.task
    await first  # returns, not raising
    full = (
        await _fresh(ContextConfig.preset("ctxlab").model_copy(update={"trigger_ratio": 0.6}))
    ).table()
    row = _row(lab, "ctxlab")
    for column in SHOWN_COLUMNS:
        assert row[column] == _cell(full.loc["ctxlab", column]), column
    assert lab.computing.value == ""


async def test_a_move_draws_its_lines_with_the_collector_off_then_gives_it_back(
    monkeypatch,
) -> None:
    # The collector would walk every kept step of every config while the move replays: it is
    # held off until the lines are drawn, and runs again for the filling that follows.
    import gc

    lab = await WhatIfLab.open(logs_session(), context_window=WINDOW, counter=ApproximateCounter())
    lab.config_picker.value = "ctxlab"
    drawn: list[tuple[bool, bool]] = []
    real = lab.redraw

    def watched(*, analyse: bool = True) -> None:
        drawn.append((analyse, gc.isenabled()))
        real(analyse=analyse)

    monkeypatch.setattr(lab, "redraw", watched)
    await _moved(lab, 0.4)
    assert lab.task is not None
    await lab.task
    assert drawn == [(False, False), (True, True)]
    assert gc.isenabled()


async def test_the_note_of_what_is_coming_names_configs_as_text() -> None:
    odd = "<i>tight</i>"
    lab = await WhatIfLab.open(
        logs_session(),
        {odd: ContextConfig.preset("ctxlab")},
        context_window=WINDOW,
        counter=ApproximateCounter(),
    )
    await _moved(lab, 0.4)
    assert "retention and cost of &lt;i&gt;tight&lt;/i&gt;: computing…" in lab.computing.value
    assert "<i>tight</i>" not in lab.computing.value
    assert lab.task is not None
    await lab.task
    assert lab.computing.value == ""
