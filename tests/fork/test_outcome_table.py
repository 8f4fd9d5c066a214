"""The outcome table column by column, on runs made by hand: every column of a run's row (its
number, summary calls among its requests, notes, seconds, workspace), the summary of several
branches (each its own runs, its own config, the spread of two runs, none of one), the price
and cache rules the caller gives, a run of one request or none, contexts compared from the
later of two forks, each run's own folder taken out of what it was shown, and a reference that
names no branch refused."""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path
from typing import Any

import pytest

from ctxlab.analysis._cost import CacheRules, costs_of_manifests
from ctxlab.analysis._prices import Price, price_for
from ctxlab.exceptions import ForkError
from ctxlab.fork import OUTCOME_COLUMNS, SUMMARY_COLUMNS, Outcomes
from ctxlab.fork._branch import BranchRun
from ctxlab.fork._outcomes_table import cell
from ctxlab.messages import UserMessage
from ctxlab.messages._request import ModelRequest
from tests.fork.test_outcome_figures import MODEL, _branch, _run, _steps


def _named(name: str, at: int, **fields: Any) -> Any:
    branch = _branch(name, at, [])
    vars(branch).update(fields)
    return branch


def _cost(before: list[Any], mine: list[Any], price: Price, rules: CacheRules | None) -> float:
    # The run's share of the whole sequence's cost (the arrival's requests priced first).
    whole = costs_of_manifests([*before, *mine], price, rules)
    return sum(c.cost for c in whole[len(before) :])


async def test_every_column_of_a_runs_row(tmp_path: Path) -> None:
    steps = await _steps(5)
    at = 2
    before = [s.manifest for s in steps[:at]]
    branch = _branch("b", at, before)
    # A summary call between two reasoning requests: a request sent, not a step.
    summary = dataclasses.replace(steps[at].manifest, purpose="summary")
    run = _run(branch, 1, steps[at:], notes=["redo: one", "redo: two"], seconds=1.23456)
    run.manifests = [run.manifests[0], summary, *run.manifests[1:]]
    run.workspace = tmp_path / "run-1" / "workspace"
    bare = _run(branch, 0, steps[at:])
    outcomes = Outcomes([bare, run], "b")
    frame = outcomes.frame()
    assert list(frame.columns) == list(OUTCOME_COLUMNS)
    assert frame.attrs["reference"] == "b"
    row = outcomes.row(run)
    assert list(row) == list(OUTCOME_COLUMNS)
    assert row["run"] == 1 and outcomes.row(bare)["run"] == 0
    assert row["steps"] == len(steps) - at  # the summary call is no step...
    assert row["requests"] == len(steps) - at + 1  # ...but a request sent
    reasoning = sum(s.manifest.estimated_input_tokens for s in steps[at:])
    assert row["tokens"] == reasoning + summary.estimated_input_tokens
    assert row["notes"] == "redo: one; redo: two"
    assert outcomes.row(bare)["notes"] is None
    assert row["seconds"] == 1.235
    assert row["workspace"] == str(tmp_path / "run-1" / "workspace")
    assert outcomes.row(bare)["workspace"] is None
    # A row given out is a copy: changing it changes nothing in the table.
    row["steps"] = 99
    assert outcomes.row(run)["steps"] == len(steps) - at


async def test_the_summary_of_three_branches_each_from_its_own_runs() -> None:
    steps = await _steps(5)
    one = _named("one", 0, config_name="tool_result_limit=300")
    two = _named("two", 1, config_name="original")
    three = _named("three", 0, config_name="trigger_ratio=0.5")
    runs = [
        _run(one, 0, steps, compactions=0),
        _run(two, 0, steps[:2], compactions=1),
        _run(two, 1, steps[:4], compactions=2),
        _run(three, 0, steps[:1], compactions=3),
        _run(three, 1, steps[:2], compactions=0),
        _run(three, 2, steps[:3], compactions=0),
    ]
    outcomes = Outcomes(runs, "two")
    summary = outcomes.summary()
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    assert summary.attrs["reference"] == "two"
    assert list(summary["branch"]) == ["one", "two", "three"]
    assert list(summary["config"]) == ["tool_result_limit=300", "original", "trigger_ratio=0.5"]
    assert list(summary["at"]) == [0, 1, 0]
    assert list(summary["runs"]) == [1, 2, 3]
    frame = outcomes.frame()
    for name, got in summary.set_index("branch").iterrows():
        mine = frame[frame["branch"] == name]
        assert got["tokens"] == pytest.approx(mine["tokens"].mean())
        assert got["compactions"] == pytest.approx(mine["compactions"].mean())
        assert got["cost"] == pytest.approx(mine["cost"].mean())
    by_name = summary.set_index("branch")
    assert list(by_name["compactions"]) == [0.0, 1.5, 1.0]
    assert by_name.loc["one", "cost_sd"] == 0.0  # one run: no spread
    two_costs = list(frame[frame["branch"] == "two"]["cost"])
    assert two_costs[0] != two_costs[1]
    assert by_name.loc["two", "cost_sd"] == pytest.approx(statistics.stdev(two_costs))


async def test_the_price_and_cache_rules_given_are_the_costs() -> None:
    steps = await _steps(6)
    at = 3
    before = [s.manifest for s in steps[:at]]
    mine = [s.manifest for s in steps[at:]]
    run = _run(_branch("b", at, before), 0, steps[at:])
    price = Price(input=10.0, output=50.0, cache_write=20.0, cache_read=0.5)
    rules = CacheRules("anthropic", min_tokens=100_000)  # nothing this short is ever cached
    default = Outcomes([run], "b").row(run)["cost"]
    assert default == pytest.approx(_cost(before, mine, price_for(MODEL), None))
    priced = Outcomes([run], "b", price=price).row(run)["cost"]
    assert priced == pytest.approx(_cost(before, mine, price, None))
    ruled = Outcomes([run], "b", price=price, rules=rules).row(run)["cost"]
    assert ruled == pytest.approx(_cost(before, mine, price, rules))
    # Controls: each given figure changes the cost (a dearer price; no cache read at all).
    assert priced > default
    assert ruled > priced
    tokens = sum(m.estimated_input_tokens for m in mine)
    assert ruled >= tokens * price.input / 1e6


async def test_a_run_of_one_request_or_none() -> None:
    steps = await _steps(3)
    before = [s.manifest for s in steps[:2]]
    branch = _branch("b", 2, before)
    one = _run(branch, 0, steps[2:3])
    none = _run(branch, 1, [], error="ForkError: could not fill a branch's workspace")
    outcomes = Outcomes([one, none], "b")
    price = price_for(MODEL)
    assert outcomes.row(one)["cost"] == pytest.approx(
        _cost(before, [steps[2].manifest], price, None)
    )
    assert outcomes.row(one)["cost"] > 0
    assert outcomes.row(none)["cost"] == 0.0
    assert (outcomes.row(none)["steps"], outcomes.row(none)["tokens"]) == (0, 0)


def _said(*texts: str) -> ModelRequest:
    return ModelRequest("sys", tuple(UserMessage(content=t) for t in texts))


def _bare(branch: Any, number: int, requests: list[ModelRequest | None]) -> BranchRun:
    run = BranchRun(branch, number, None, None)
    run.requests = list(requests)
    return run


def test_contexts_are_compared_from_the_later_fork() -> None:
    # The reference forked at 5, the other branch at 3: steps 3 and 4 are the other's own,
    # the reference has nothing of its own there to compare with.
    x = {n: _said(f"step {n}") for n in range(8)}
    reference = _bare(_branch("ref", 5, []), 0, [x[5], x[6]])
    early = _bare(_branch("early", 3, []), 0, [x[3], x[4], x[5], x[6]])
    parted = _bare(_branch("parted", 3, []), 0, [x[3], x[4], x[5], x[7]])
    outcomes = Outcomes([reference, early, parted], "ref")
    assert outcomes.row(early)["diverges_at"] is None
    assert outcomes.row(parted)["diverges_at"] == 6  # control: a real parting is found
    # The reference forked earlier than the branch: compared from the branch's fork.
    late = _bare(_branch("late", 5, []), 0, [x[5], x[6]])
    swapped = Outcomes([early, late], "early")
    assert swapped.row(late)["diverges_at"] is None


def test_each_runs_own_folder_and_the_origins_are_taken_out(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    folders = [tmp_path / f"run-{n}" / "workspace" for n in range(3)]
    for folder in (origin, *folders):
        folder.mkdir(parents=True)
    branch = _named("b", 0, origin_folder=str(origin.resolve()))

    def run(number: int, *named: Path) -> BranchRun:
        made = _bare(branch, number, [_said("go"), *(_said(f"see {p}/notes.txt") for p in named)])
        made.workspace = folders[number]
        return made

    # Run 0 names its own folder, then the origin's; run 1 its own twice: alike.
    ours = run(0, folders[0].resolve(), origin.resolve())
    theirs = run(1, folders[1].resolve(), folders[1].resolve())
    # Control: run 2 names run 1's folder, not its own: that is what it was shown.
    stray = run(2, folders[1].resolve(), origin.resolve())
    failed = _bare(branch, 3, [_said("go"), None, _said("after")])
    outcomes = Outcomes([ours, theirs, stray, failed], "b")
    assert outcomes.row(theirs)["diverges_at"] is None
    assert outcomes.row(stray)["diverges_at"] == 1
    assert outcomes.row(failed)["diverges_at"] == 1  # a failed preparation parts there


def test_a_reference_that_names_no_branch_is_refused() -> None:
    run = _bare(_branch("b", 0, []), 0, [_said("go")])
    with pytest.raises(ForkError, match=r"reference 'nope' is none of the runs' branches: \['b'\]"):
        Outcomes([run], "nope")


async def test_the_html_table_escapes_every_value_and_writes_numbers_to_read() -> None:
    steps = await _steps(3)
    hostile = _named("<b>x</b>", 0, config_name="a & <i>b</i>")
    plain = _named("plain", 0)
    runs = [
        _run(hostile, 0, steps, reply="<script>alert(1)</script>", passed=True),
        _run(hostile, 1, steps[:1], passed=False),
        _run(plain, 0, steps[:2]),
        _run(_named("same", 0), 0, steps),
    ]
    outcomes = Outcomes(runs, "<b>x</b>")
    table = outcomes.table_html()
    assert outcomes._repr_html_() == table
    assert "<b>x</b>" not in table and "<i>b</i>" not in table
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td><td>a &amp; &lt;i&gt;b&lt;/i&gt;</td>" in table
    assert "from &lt;b&gt;x&lt;/b&gt;'s first run" in table
    assert "runs out of 2;" in table
    head = "".join(f"<th>{c}</th>" for c in SUMMARY_COLUMNS)
    assert table.startswith(f"<table class='ctxlab-outcomes'><thead><tr>{head}</tr></thead>")
    assert "<tbody><tr><td>" in table and "</td></tr></tbody>" in table
    assert table.count("</td></tr><tr><td>") == 2  # three rows, one per branch
    rows = table.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")[:3]
    cells = [r.removeprefix("<tr><td>").removesuffix("</td>").split("</td><td>") for r in rows]
    summary = outcomes.summary()
    # Whole numbers as such (a mean of 2.0 steps is "2"), a small cost to four places, a
    # larger figure to one with thousands marked, nothing as a dash.
    assert cells[0][SUMMARY_COLUMNS.index("steps")] == "2.5000"  # (4 + 1) / 2
    assert cells[1][SUMMARY_COLUMNS.index("steps")] == "2"
    assert cells[0][SUMMARY_COLUMNS.index("cost")] == f"{summary['cost'][0]:.4f}"
    tokens = summary["tokens"][0]
    assert cells[0][SUMMARY_COLUMNS.index("tokens")] == (
        f"{int(tokens):,}" if float(tokens).is_integer() else f"{tokens:,.1f}"
    )
    assert tokens > 1_000 and "," in cells[0][SUMMARY_COLUMNS.index("tokens")]
    assert cells[0][SUMMARY_COLUMNS.index("diverges_at")] == "1"
    assert cells[2][SUMMARY_COLUMNS.index("diverges_at")] == "–"  # never parted
    assert [cell(v) for v in (9.5, 10.5, 1234.56, 2.0, None, float("nan"))] == [
        "9.5000",
        "10.5",
        "1,234.6",
        "2",
        "–",
        "–",
    ]


async def test_a_run_is_priced_as_its_own_models_provider_bills() -> None:
    # A session recorded on an OpenAI model, forked onto Claude: the run's requests cached by
    # Anthropic's rules and priced at Claude's price — not the origin's rules.
    steps = await _steps(6)
    at = 3
    before = [dataclasses.replace(s.manifest, model="gpt-4o") for s in steps[:at]]
    mine = [s.manifest for s in steps[at:]]
    run = _run(_branch("b", at, before), 0, steps[at:])
    cost = Outcomes([run], "b").row(run)["cost"]
    price = price_for(MODEL)
    assert cost == pytest.approx(_cost(before, mine, price, CacheRules.anthropic()))
    # The control: under the origin's (OpenAI's) rules the same requests cost otherwise.
    assert cost != pytest.approx(_cost(before, mine, price, CacheRules.openai()))


async def test_a_runs_cost_is_on_its_own_clock_from_the_fork_point() -> None:
    # The origin's requests recorded at 0 and 20 s; the fork run days later, its requests 20 s
    # apart: its first request reads what the origin cached (no gap at the fork), as it does
    # without any clock. Ten minutes inside the run are a gap that expires the cache.
    steps = await _steps(6)
    at = 3
    before = [dataclasses.replace(s.manifest, sent_at=20.0 * n) for n, s in enumerate(steps[:at])]
    later = 1_780_000_000.0
    mine = [
        dataclasses.replace(s.manifest, sent_at=later + 20.0 * n) for n, s in enumerate(steps[at:])
    ]
    run = _run(_branch("b", at, before), 0, steps[at:])
    run.manifests = mine
    untimed = [dataclasses.replace(m, sent_at=None) for m in (*before, *mine)]
    price = price_for(MODEL)
    warm = costs_of_manifests(untimed, price)
    assert Outcomes([run], "b").row(run)["cost"] == pytest.approx(
        sum(c.cost for c in warm[at:]), rel=1e-12
    )
    idle = [*mine[:1], *(dataclasses.replace(m, sent_at=m.sent_at + 600.0) for m in mine[1:])]
    run.manifests = idle
    timed = costs_of_manifests([*before, *idle], price, joined=at)
    assert timed[at + 1].expired > 0
    assert Outcomes([run], "b").row(run)["cost"] == pytest.approx(
        sum(c.cost for c in timed[at:]), rel=1e-12
    )
    assert Outcomes([run], "b").row(run)["cost"] > sum(c.cost for c in warm[at:])
