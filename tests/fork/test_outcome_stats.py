"""The statistics of an outcome table, on runs made by hand: each branch's pass rate over the
runs with a verdict and its Wilson interval (found again by the score test, inverted in
tests/fork/test_stats.py), the difference to the reference paired by run number (not by order)
or unpaired when the run counts differ, a branch with no verdict (no interval, said), the runs a
width needs, the steps after each compaction, and the sentences and HTML a person reads."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import UsageError
from ctxlab.fork import Outcomes, runs_needed
from ctxlab.fork._stats import paired_difference, unpaired_difference
from ctxlab.manifest import Transform
from tests.fork.test_outcome_figures import _branch, _run, _steps
from tests.fork.test_stats import _score_interval


def _runs(name: str, verdicts: Sequence[bool | None], steps: list[Any]) -> list[Any]:
    branch = _branch(name, 0, [])
    return [_run(branch, n, steps[:2], passed=v) for n, v in enumerate(verdicts)]


async def test_pass_rates_intervals_and_the_paired_difference() -> None:
    steps = await _steps(3)
    ref = _runs("ref", [True] * 8 + [False, True], steps)
    cut = _runs("cut", [True, False, True, False, True, True, None, True, True, False], steps)
    # Listed out of order: pairs are made by run number, not by place.
    outcomes = Outcomes([*ref, *reversed(cut)], "ref")
    table = _table(outcomes)
    assert table["ref"]["verdicts"] == 10 and table["cut"]["verdicts"] == 9
    assert table["cut"]["passed"] == 6
    assert table["cut"]["pass_rate"] == pytest.approx(6 / 9)
    low, high = _score_interval(6, 9, 0.95)
    assert table["cut"]["pass_low"] == pytest.approx(low, abs=1e-9)
    assert table["cut"]["pass_high"] == pytest.approx(high, abs=1e-9)
    low, high = _score_interval(9, 10, 0.95)
    assert table["ref"]["pass_low"] == pytest.approx(low, abs=1e-9)
    # Run 6 of cut has no verdict: 9 pairs; run 8 of ref failed where cut's run 8 passed.
    pairs = [(c.passed, r.passed) for c, r in zip(cut, ref, strict=True) if c.passed is not None]
    assert table["cut"]["pairs"] == 9
    assert table["cut"]["difference"] == pytest.approx(6 / 9 - 8 / 9)
    expected = paired_difference(pairs)
    assert table["cut"]["difference_low"] == pytest.approx(expected.low)
    assert table["cut"]["difference_high"] == pytest.approx(expected.high)
    # Control: paired by place (the reversed list) the interval would differ.
    by_place = paired_difference(
        [
            (c.passed, r.passed)
            for c, r in zip(reversed(cut), ref, strict=True)
            if c.passed is not None
        ]
    )
    assert by_place.low != pytest.approx(expected.low)
    # The reference has no difference to itself.
    assert math.isnan(table["ref"]["difference"]) and table["ref"]["pairs"] is None
    assert table["cut"]["runs_needed"] == runs_needed(6 / 9, 0.10)
    assert (
        table["ref"]["runs_needed"] == runs_needed(0.9, 0.10) == 37
    )  # checked by hand: ±0.0994 at 37, ±0.1008 at 36


async def test_unpaired_when_the_run_counts_differ() -> None:
    steps = await _steps(3)
    ref = _runs("ref", [True] * 9 + [False], steps)
    few = _runs("few", [True, False, False], steps)
    table = _table(Outcomes([*ref, *few], "ref"))
    assert table["few"]["pairs"] is None
    expected = unpaired_difference(1, 3, 9, 10)
    assert table["few"]["difference"] == pytest.approx(1 / 3 - 0.9)
    assert table["few"]["difference_low"] == pytest.approx(expected.low)
    assert table["few"]["difference_high"] == pytest.approx(expected.high)


async def test_ten_of_ten_and_a_branch_with_no_verdict() -> None:
    steps = await _steps(3)
    ten = _runs("ten", [True] * 10, steps)
    unchecked = _runs("unchecked", [None] * 10, steps)
    outcomes = Outcomes([*ten, *unchecked], "ten")
    table = _table(outcomes)
    assert table["ten"]["pass_high"] == 1.0 and table["ten"]["pass_low"] < 1
    assert table["ten"]["pass_low"] == pytest.approx(_score_interval(10, 10, 0.95)[0])
    row = table["unchecked"]
    assert row["verdicts"] == 0 and row["passed"] == 0
    assert all(math.isnan(row[c]) for c in ("pass_rate", "pass_low", "pass_high"))
    assert math.isnan(row["difference"]) and row["runs_needed"] is None
    findings = outcomes.findings()
    assert findings[1] == (
        "unchecked: no run has a verdict (no check, or it gave none): no pass rate, no interval."
    )
    assert findings[0] == (
        "ten: 10 of 10 runs with a verdict passed, 1.00 (95% interval 0.72 to 1.00); "
        "±0.10 needs 16 runs at this rate."
    )
    page = outcomes.table_html()
    assert "no run has a verdict" in page and "verdicts: runs the check judged" in page


async def test_the_findings_say_the_difference_and_its_pairing() -> None:
    steps = await _steps(3)
    ref = _runs("ref", [True] * 10, steps)
    half = _runs("half", [True, False] * 5, steps)
    few = _runs("few", [False, False], steps)
    outcomes = Outcomes([*ref, *half, *few], "ref", confidence=0.9, width=0.2)
    found = outcomes.findings()
    table = _table(outcomes)
    low, high = _score_interval(5, 10, 0.9)
    paired = paired_difference([(v, True) for v in [True, False] * 5], 0.9)
    assert found[1] == (
        f"half: 5 of 10 runs with a verdict passed, 0.50 (90% interval {low:.2f} to "
        f"{high:.2f}); -0.50 against ref (paired by run, 10 pairs: {paired.low:+.2f} to "
        f"{paired.high:+.2f}); ±0.20 needs {runs_needed(0.5, 0.2, 0.9)} runs at this rate."
    )
    assert table["half"]["pass_low"] == pytest.approx(low, abs=1e-9)
    assert "(unpaired: " in found[2]
    assert outcomes.summary().attrs["confidence"] == 0.9


async def test_steps_after_each_compaction() -> None:
    steps = await _steps(6)
    compacted = Transform(kind="history_compaction", target="messages 1-4")

    def compacting(step: Any) -> Any:
        manifest = dataclasses.replace(step.manifest, transforms=(compacted,))
        return dataclasses.replace(step, manifest=manifest)

    summary = dataclasses.replace(
        steps[0], manifest=dataclasses.replace(steps[0].manifest, purpose="summary")
    )
    branch = _branch("b", 0, [])
    # Six reasoning requests; compactions made for the 2nd and the 5th (a summary call before
    # each, which is no step): 5 steps from the first on, 2 from the second.
    first = [steps[0], summary, compacting(steps[1]), steps[2], steps[3]]
    first += [summary, compacting(steps[4]), steps[5]]
    second = [steps[0], steps[1], steps[2], compacting(steps[3]), steps[4], steps[5]]
    runs = [_run(branch, 0, first), _run(branch, 1, second), _run(branch, 2, steps)]
    outcomes = Outcomes(runs, "b")
    assert [outcomes.row(r)["after_compactions"] for r in runs] == [(5, 2), (3,), ()]
    table = outcomes.summary()
    assert table["steps_after_compaction"][0] == pytest.approx((5 + 2 + 3) / 3)
    # Control: no compaction, no figure.
    alone = Outcomes([_run(branch, 0, steps)], "b").summary()
    assert math.isnan(alone["steps_after_compaction"][0])


async def test_the_confidence_and_the_width_are_checked() -> None:
    steps = await _steps(2)
    runs = _runs("b", [True], steps)
    with pytest.raises(UsageError, match="confidence must be a number between 0 and 1"):
        Outcomes(runs, "b", confidence=95)
    with pytest.raises(UsageError, match="width must be the interval's half-length"):
        Outcomes(runs, "b", width=-0.1)


def _table(outcomes: Outcomes) -> dict[str, dict[str, Any]]:
    """The summary's rows by branch name (a missing count, <NA> in the frame, is None)."""
    return {
        str(r["branch"]): {str(k): v for k, v in r.items()}
        for r in outcomes.summary().to_dict("records")
    }


async def test_the_docs_quote_a_finding_the_code_gives() -> None:
    # docs/concepts/forks.md's example: 6 of 9 verdicts against the original's runs, paired.
    steps = await _steps(3)
    original = _runs("original", [True] * 5 + [False] + [True] * 4, steps)
    cut = _runs("cut", [True] * 5 + [True, False, False, False, None], steps)
    found = Outcomes([*original, *cut], "original").findings()[1]
    page = (Path(__file__).parents[2] / "docs" / "concepts" / "forks.md").read_text()
    assert " ".join(page.split()).count(found) == 1, found
