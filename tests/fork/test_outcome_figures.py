"""The figures of an outcome table, each checked against what the runs' records hold: the steps,
requests and tokens a run sent from the fork (a failed preparation's -1 is no tokens), its cost
(its own requests only, reading what the arrival cached), the verdicts counted (True only), the
spread (the sample standard deviation), the earliest divergence; `first_difference` on
signatures; `signature` reading ids that contain one another; a branch name taken twice; a
workspace copy's link out of it."""

from __future__ import annotations

import dataclasses
import math
import statistics
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter
from ctxlab.analysis import replay
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._prices import price_for
from ctxlab.exceptions import ForkError
from ctxlab.fork import Outcomes
from ctxlab.fork._branch import BranchRun
from ctxlab.fork._branch_folder import branch_folder
from ctxlab.fork._signature import first_difference, signature
from ctxlab.fork._workspace import Workspace
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ModelRequest

MODEL = "claude-sonnet-4-5"


def _conversation(turns: int) -> list[UserMessage | AssistantMessage]:
    """A tool-using session of ``turns`` calls, each result long enough to be cached."""
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Read every page of the report. " * 60)
    ]
    for n in range(turns):
        messages.append(
            AssistantMessage(
                content=(ToolUseBlock(id=f"toolu_{n}", name="read", input={"page": n}),)
            )
        )
        text = f"page {n}: " + "the quarterly figures are unchanged. " * 80
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"toolu_{n}", content=text),))
        )
    messages.append(AssistantMessage(content=(TextBlock(text="Done."),)))
    return messages


async def _steps(turns: int) -> list[Any]:
    steps = [
        step
        async for step in replay(
            _conversation(turns), context_window=200_000, counter=ApproximateCounter()
        )
    ]
    # Each manifest names the model it was for: the table prices a run by it.
    return [
        dataclasses.replace(s, manifest=dataclasses.replace(s.manifest, model=MODEL)) for s in steps
    ]


def _branch(name: str, at: int, before: list[Any]) -> Any:
    # A branch as the table reads it: its names, where it forked, what its arrival sent.
    return SimpleNamespace(
        name=name,
        config_name=name,
        arrival="as_it_was",
        at=at,
        first_step=at,
        origin_folder=None,
        point=SimpleNamespace(manifests=tuple(before)),
    )


def _run(branch: Any, number: int, steps: list[Any], **record: Any) -> BranchRun:
    run = BranchRun(branch, number, None, None)
    run.manifests = [s.manifest for s in steps]
    run.requests = [s.request for s in steps]
    for key, value in record.items():
        setattr(run, key, value)
    return run


async def test_a_runs_figures_are_its_own_requests_from_the_fork() -> None:
    steps = await _steps(6)
    at = 3
    before, after = steps[:at], steps[at:]
    branch = _branch("b", at, [s.manifest for s in before])
    run = _run(branch, 0, after, reply="Done.", passed=True, compactions=1)
    row = Outcomes([run], "b").frame().iloc[0]
    assert row["steps"] == len(after)
    assert row["requests"] == len(after)
    assert row["compactions"] == 1
    assert row["tokens"] == sum(s.manifest.estimated_input_tokens for s in after)
    # The cost of its own requests, priced after what the arrival's requests cached: the whole
    # sequence's cost less the arrival's (an earlier request's cost never depends on later ones).
    price = price_for(MODEL)
    whole = costs_of_manifests([s.manifest for s in steps], price)
    arrival = costs_of_manifests([s.manifest for s in before], price)
    expected = sum(c.cost for c in whole) - sum(c.cost for c in arrival)
    assert row["cost"] == pytest.approx(expected, rel=1e-9)
    # Control: the arrival's requests are not the run's; priced alone, the run's first request
    # would find nothing cached and cost more.
    alone = sum(c.cost for c in costs_of_manifests([s.manifest for s in after], price))
    assert alone > row["cost"] > 0
    assert sum(c.cost for c in whole) > row["cost"]


async def test_a_failed_preparation_sends_no_tokens() -> None:
    steps = await _steps(3)
    failed = dataclasses.replace(
        steps[1], manifest=dataclasses.replace(steps[1].manifest, estimated_input_tokens=-1)
    )
    branch = _branch("b", 0, [])
    run = _run(branch, 0, [steps[0], failed, steps[2]])
    row = Outcomes([run], "b").frame().iloc[0]
    assert row["tokens"] == steps[0].manifest.estimated_input_tokens + (
        steps[2].manifest.estimated_input_tokens
    )


async def test_the_summary_counts_verdicts_spread_and_the_earliest_divergence() -> None:
    steps = await _steps(5)
    reference = _branch("ref", 0, [])
    other = _branch("cut", 0, [])
    runs = [
        _run(reference, 0, steps, reply="Done.", passed=True),
        _run(reference, 1, steps, reply="Done.", passed=True),
        # Three runs of the other branch: passed, failed, unchecked; fewer steps each; the
        # third has no reply.
        _run(other, 0, steps[:4], reply="Done.", passed=True),
        _run(other, 1, steps[:2], reply="Done.", passed=False),
        _run(other, 2, steps[:3], passed=None, error="max steps"),
    ]
    outcomes = Outcomes(runs, "ref")
    frame = outcomes.frame()
    mine = frame[frame["branch"] == "cut"]
    # Each run's context parts from the reference's where its requests end.
    assert list(mine["diverges_at"]) == [4, 2, 3]
    assert frame[frame["branch"] == "ref"]["diverges_at"].isna().all()
    summary = outcomes.summary().set_index("branch")
    cut = summary.loc["cut"]
    assert cut["runs"] == 3
    assert cut["passed"] == 1  # True only: a failed or unchecked run is not a pass
    assert cut["replied"] == 2
    assert cut["errors"] == 1
    assert cut["diverges_at"] == 2  # the earliest
    assert (cut["steps"], cut["steps_min"], cut["steps_max"]) == (3.0, 2, 4)
    costs = list(mine["cost"])
    assert len(set(costs)) == 3
    mean = sum(costs) / 3
    sample_sd = math.sqrt(sum((c - mean) ** 2 for c in costs) / 2)  # n - 1: three runs of many
    assert cut["cost"] == pytest.approx(mean)
    assert cut["cost_sd"] == pytest.approx(sample_sd)
    assert cut["cost_sd"] != pytest.approx(statistics.pstdev(costs))  # control: not population
    assert summary.loc["ref"]["passed"] == 2
    assert summary.loc["ref"]["cost_sd"] == 0.0


def _request(*texts: str) -> ModelRequest:
    return ModelRequest("sys", tuple(UserMessage(content=t) for t in texts))


def test_first_difference_finds_the_first_step_that_differs() -> None:
    a, b, c = (signature(_request(t)) for t in ("a", "b", "c"))
    assert first_difference([a, b, c], [a, b, c]) is None
    assert first_difference([a, b, c], [a, c, c]) == 1
    assert first_difference([a, b], [a, b, c]) == 2  # one run went on: it differs there
    assert first_difference([a, b, c], [a, b]) == 2
    assert first_difference([a, b, c], [c, c, c], start=1) == 1  # before start is not compared
    # Both failed at the same step (no request) yet went on alike: they agree there.
    assert first_difference([a, None, c], [a, None, c]) is None
    assert first_difference([a, None, c], [a, b, c]) == 1  # one failed, one did not
    assert first_difference([a, None], [a]) == 1


_MISSING = object()


def _reference(one: list[Any], other: list[Any], start: int) -> int | None:
    # The docstring's rule, written here: the first step from ``start`` where one run has a
    # request and the other none, or their requests differ; a failed preparation (None)
    # differs from every request, and two failures at one step are alike.
    for step in range(start, max(len(one), len(other), start)):
        a = one[step] if step < len(one) else _MISSING
        b = other[step] if step < len(other) else _MISSING
        if a is _MISSING or b is _MISSING or a != b:
            return step
    return None


@settings(max_examples=80, database=None, deadline=None)
@given(
    st.lists(st.sampled_from(["x", "y", None]), max_size=6),
    st.lists(st.sampled_from(["x", "y", None]), max_size=6),
    st.integers(0, 3),
)
def test_first_difference_follows_its_rule(
    one: list[str | None], other: list[str | None], start: int
) -> None:
    sig = {t: signature(_request(t)) for t in ("x", "y")}
    left = [sig[t] if t else None for t in one]
    right = [sig[t] if t else None for t in other]
    found = first_difference(left, right, start)
    assert found == first_difference(right, left, start)
    assert found == _reference(left, right, start)


def test_a_signature_reads_an_id_inside_a_longer_id_as_two_calls() -> None:
    # Two runs whose call ids differ but whose calls are the same read alike, and an id that
    # is the start of another ("call_1" in "call_12") is not replaced inside it.
    def request(first: str, second: str) -> ModelRequest:
        return ModelRequest(
            "sys",
            (
                UserMessage(content="go"),
                AssistantMessage(
                    content=(
                        ToolUseBlock(id=first, name="read", input={"page": 1}),
                        ToolUseBlock(id=second, name="read", input={"page": 2}),
                    )
                ),
                UserMessage(
                    content=(
                        ToolResultBlock(tool_use_id=first, content=f"see {second} next"),
                        ToolResultBlock(tool_use_id=second, content=f"after {first}"),
                    )
                ),
            ),
        )

    ours = signature(request("call_1", "call_12"))
    theirs = signature(request("toolu_a", "toolu_bb"))
    assert ours == theirs
    texts = [block[2] for block in ours[2][2][1]]
    assert texts == ["see <call 2> next", "after <call 1>"]


def test_a_branch_name_taken_is_numbered(tmp_path: Path) -> None:
    names = [branch_folder(tmp_path, "cut")[0] for _ in range(3)]
    assert names == ["cut", "cut-2", "cut-3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut", "cut-2", "cut-3"]


def test_a_workspace_copy_keeps_no_link_out_of_it(tmp_path: Path) -> None:
    # A link out of the folder to a file becomes a file of the copy's own, holding its content
    # (tests/fork/test_workspace_links.py has every other kind): a write stays in the copy.
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    source = tmp_path / "project"
    source.mkdir()
    (source / "main.py").write_text("print('hi')\n")
    (source / "link.txt").symlink_to(outside)
    made = Workspace(source).make(tmp_path / "branch")
    assert (made / "main.py").read_text() == "print('hi')\n"
    assert not (made / "link.txt").is_symlink()
    assert (made / "link.txt").read_text() == "secret\n"
    # Control: a refused copy into the folder itself.
    with pytest.raises(ForkError, match="inside the workspace it copies"):
        Workspace(source).make(source / "copy")
