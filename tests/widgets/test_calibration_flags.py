"""The recorded view's figures that cannot explode or mislead, as the Lab shows them: a request
whose calibrated estimate is more than 1.5 times off its bill (so every one 2× off) or whose
bill is 0 is flagged in the header, the step table and on the plot (⊗ on the bill), and an
estimate off its bill is left out of the plot's line — and so of its y axis's range; the
thresholds a recording does not hold say "unknown" (map, plot, header, step table), never 0.

The session is a real Gemini CLI file (``tests/fixtures/gemini/aim``, its README) whose third
request was forecast at 15,003,358 tokens against a bill of 10,588 by the fit issue 50 found
(reproduced here by handing the Lab that calibration); its own calibration is the control:
nothing flagged."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from ctxlab import load
from ctxlab.analysis._calibration import ZERO_BILL, Calibration, CalibrationPoint, fit_points
from ctxlab.messages import ProviderUsage
from ctxlab.widgets import Lab
from ctxlab.widgets._budget import UNKNOWN_LINES
from ctxlab.widgets._header import calibration_notes

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gemini"
GEMINI = FIXTURES / "aim" / "control_pro.json"
WINDOW = 32_000
"""The window the session is shown at: its largest request billed 12,767."""
WILD = 15_003_358
"""What the fit of the first two requests forecast for the third before issue 50's fix."""


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&#x27;", "'")


def _drawn_y(lab: Lab) -> float:
    """The largest y any drawn trace of the plot holds (what plotly's autorange spans)."""
    values = [
        float(y)
        for trace in lab.budget.plot.data
        if trace.get("yaxis") != "y2"  # the hidden share axis, 0–100
        for y in np.asarray(trace.get("y", []), dtype=float)
        if y == y
    ]
    return max(values)


@pytest.fixture
async def gemini() -> Lab:
    return await Lab.open(load(GEMINI), context_window=WINDOW)


async def test_a_well_calibrated_session_shows_no_flag(gemini: Lab) -> None:
    # The control: the real session's own calibration forecasts every request within 5 %.
    assert gemini.log.flags() == []
    assert "flagged" not in gemini.header.value
    assert list(gemini.steps["calibration_flag"]) == [""] * 11
    assert list(gemini.budget.trace("flagged")["x"]) == []
    drawn = gemini.budget.trace("calibrated estimate")
    assert list(drawn["x"]) == list(range(1, 11))  # every forecast drawn (none for request 0)
    assert _drawn_y(gemini) <= WINDOW  # the input-limit line tops the plot


async def test_an_estimate_far_off_its_bill_is_flagged_and_left_out_of_the_axis(
    gemini: Lab,
) -> None:
    real = gemini.calibration
    assert real is not None
    rows = [dict(r) for r in real.rows]
    rows[2]["forecast"] = WILD  # the calibration the Lab showed before the fix
    gemini.log.calibrate(Calibration(real.fits, real.points, rows), segmented=True)
    gemini._update_header()
    gemini._redraw()
    why = "calibrated estimate 15,003,358 is 1,417.0× above its bill of 10,588"
    assert gemini.log.flags() == [(2, why)]
    assert gemini.steps["calibration_flag"][2] == why
    header = _text(gemini.header.value)
    assert (
        f"flagged (1 request, ⊗ on the plot; an estimate off its bill is left out of the plot's scale): request 2: {why}"
        in header
    )
    # On the plot: the ⊗ on the bill, the estimate not drawn — the axis spans the session,
    # not 15 million tokens (before the fix, the session was a flat line under it).
    marks = gemini.budget.trace("flagged")
    assert (list(marks["x"]), list(marks["y"])) == ([2.0], [10_588.0])
    assert marks["text"] == [f"request 2: {why}"]
    assert 2 not in list(gemini.budget.trace("calibrated estimate")["x"])
    assert _drawn_y(gemini) <= WINDOW  # the input-limit line tops the plot
    # An estimate half its bill is flagged the same way; one 1.4 times it is not.
    rows[2]["forecast"] = 5_000
    rows[3]["forecast"] = round(1.4 * 11_174)
    gemini.log.calibrate(Calibration(real.fits, real.points, rows), segmented=True)
    assert gemini.log.flags() == [(2, "calibrated estimate 5,000 is 2.1× below its bill of 10,588")]


async def test_a_request_billed_zero_is_flagged_not_taken_as_billed() -> None:
    # The real session with its first reply's usage recorded as 0 tokens (as some harnesses
    # write a usage that never arrived): no bill to reconcile.
    transcript = load(GEMINI)
    first = min(transcript.usage)
    usage = {**transcript.usage, first: ProviderUsage(0, 0)}
    lab = await Lab.open(dataclasses.replace(transcript, usage=usage), context_window=WINDOW)
    calibration = lab.calibration
    assert calibration is not None and calibration.zero_bills == (0,)
    assert [p.number for p in calibration.points] == list(range(1, 11))  # 0 left out
    assert "1 request billed 0 tokens (no usage recorded: request 0): left out" in (
        calibration.describe()
    )
    assert lab.log.flags() == [(0, ZERO_BILL)]
    assert lab.steps["calibration_flag"][0] == ZERO_BILL
    assert f"request 0: {ZERO_BILL}" in _text(lab.header.value)
    marks = lab.budget.trace("flagged")
    assert (list(marks["x"]), list(marks["y"])) == ([0.0], [0.0])


def _hovers(lab: Lab, points: int) -> list[str]:
    # The total's hover text of each point: one text for every point is sent once (plotly.js
    # gives a scalar to all).
    text = lab.budget.trace("total")["text"]
    return list(text) if isinstance(text, list | tuple) else [text] * points


async def test_thresholds_a_recording_does_not_hold_say_unknown_never_zero(gemini: Lab) -> None:
    gemini.select(3)
    assert gemini.map.marks == {"usage notice": None, "trigger": None, "input limit": WINDOW}
    assert set(gemini.steps["thresholds"]) == {"unknown"}
    assert "usage notice and trigger: unknown" in _text(gemini.header.value)
    for uid in ("usage notice", "trigger"):
        line = gemini.budget.trace(uid)
        assert line["name"] == f"{uid}: unknown"
        assert all(y != y for y in line["y"])  # no line, not one at 0
    assert _hovers(gemini, 11) == [f"<br>{UNKNOWN_LINES}"] * 11
    # Replayed, ctxlab's config draws its own lines: known, named plainly, on the map too.
    await gemini.show_view("replayed")  # type: ignore[misc]
    gemini.select(3)
    lines = gemini.next_thresholds()
    assert gemini.map.marks["trigger"] == lines.trigger_tokens
    assert gemini.map.marks["usage notice"] == lines.notice_tokens
    assert set(gemini.steps["thresholds"]) == {"config"}
    assert "usage notice and trigger: unknown" not in gemini.header.value
    assert gemini.budget.trace("trigger")["name"] == "trigger"
    assert _hovers(gemini, 11) == [""] * 11


def test_the_header_says_where_the_bill_broke_from_the_fit() -> None:
    # What the file does not record changed twice (`ctxlab.analysis._calibration_breaks`).
    points = [
        CalibrationPoint(n, c, 10_000 + round(1.2 * c) + (30_000 if 20 <= n < 40 else 0))
        for n, c in enumerate(100 * n if n < 3 else 2_000 + 1_000 * n for n in range(60))
    ]
    calibration = fit_points(points)
    (note,) = calibration_notes(calibration)
    assert note.endswith(
        "; the bill broke from the fit at requests 20, 40 (what was sent beyond the file "
        "changed without the file saying so: the fixed part is measured again from each)"
    )
    (plain,) = calibration_notes(fit_points(points[:20]))  # the control: before the break
    assert "broke" not in plain
