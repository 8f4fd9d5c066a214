"""A fork's runs say whether each of their compactions paid back (`Outcomes.compactions`): each
figure recomputed here from the run's requests priced as its ``cost`` is (the arrival's
requests before them), by the definition in docs/concepts/cost.md."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

from ctxlab import ApproximateCounter
from ctxlab.analysis import replay
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._prices import price_for
from ctxlab.fork import Outcomes
from ctxlab.fork._branch import BranchRun
from tests.analysis.test_breakeven_whatif import by_hand, session

MODEL = "claude-sonnet-4-6"


async def _manifests() -> list[Any]:
    steps = [
        step
        async for step in replay(
            session().messages, context_window=8_000, counter=ApproximateCounter()
        )
    ]
    return [dataclasses.replace(s.manifest, model=MODEL) for s in steps]


def _run(name: str, before: list[Any], mine: list[Any]) -> BranchRun:
    branch = SimpleNamespace(
        name=name,
        config_name=name,
        arrival="as_it_was",
        at=len(before),
        first_step=len(before),
        origin_folder=None,
        point=SimpleNamespace(manifests=tuple(before)),
    )
    return BranchRun(branch, 0, None, None, manifests=mine)  # type: ignore[arg-type]


async def test_each_compaction_of_a_run_is_priced_against_the_run_without_it() -> None:
    manifests = await _manifests()
    compacted = [
        n
        for n, m in enumerate(manifests)
        if any(t.kind == "history_compaction" for t in m.transforms)
    ]
    assert len(compacted) >= 2
    fork = compacted[0] - 3  # forked three requests before the first compaction
    before, mine = manifests[:fork], manifests[fork:]
    frame = Outcomes([_run("b", before, mine)], "b").compactions()
    assert list(frame["request"]) == compacted
    assert list(frame["branch"]) == ["b"] * len(compacted)
    price = price_for(MODEL)
    costs = costs_of_manifests(manifests, price)  # before and after the fork, as `cost` reads
    for n, (row, step) in enumerate(zip(frame.itertuples(), compacted, strict=True)):
        (t,) = [t for t in manifests[step].transforms if t.kind == "history_compaction"]
        assert t.tokens_before is not None and t.tokens_after is not None
        removed = t.tokens_before - t.tokens_after
        end = compacted[n + 1] if n + 1 < len(compacted) else len(costs)
        hand = by_hand(costs, step, removed, end)
        assert row.removed == removed
        assert abs(row.cost - hand["cost"]) < 1e-12
        assert abs(row.saved - hand["saved"]) < 1e-12
        assert row.compaction == "automatic summary"


async def test_a_compaction_before_the_fork_is_not_the_runs() -> None:
    manifests = await _manifests()
    compacted = [
        n
        for n, m in enumerate(manifests)
        if any(t.kind == "history_compaction" for t in m.transforms)
    ]
    fork = compacted[0] + 2
    frame = Outcomes([_run("b", manifests[:fork], manifests[fork:])], "b").compactions()
    assert list(frame["request"]) == compacted[1:]


async def test_a_compaction_between_requests_breaks_the_next_request() -> None:
    # Compacted by "Compact now" or the CompressContext tool: its preparation (purpose
    # ``compaction``) sends nothing; the next reasoning request is the one it breaks.
    manifests = await _manifests()
    step = next(
        n
        for n, m in enumerate(manifests)
        if any(t.kind == "history_compaction" for t in m.transforms)
    )
    own = manifests[step]
    apart = dataclasses.replace(own, purpose="compaction", request_id="compact")
    reasoning = dataclasses.replace(
        own, transforms=tuple(t for t in own.transforms if t.kind != "history_compaction")
    )
    mine = [*manifests[2:step], apart, reasoning, *manifests[step + 1 :]]
    within = Outcomes([_run("b", manifests[:2], manifests[2:])], "b").compactions()
    between = Outcomes([_run("b", manifests[:2], mine)], "b").compactions()
    assert list(between["request"]) == list(within["request"])
    assert between["compaction"].iloc[0] == "requested summary"
    assert list(between["cost"]) == list(within["cost"])


async def test_a_runs_own_pause_is_timed_by_its_own_clock() -> None:
    # The run's requests stamped as an agent sends them (sent_at): an hour's pause before the
    # first compaction's request, 30 s between the others. The origin's requests carry no time
    # (the run is joined to them with no gap).
    manifests = await _manifests()
    compacted = [
        n
        for n, m in enumerate(manifests)
        if any(t.kind == "history_compaction" for t in m.transforms)
    ]
    fork = compacted[0] - 3
    now, mine = 1_700_000_000.0, []
    for n, manifest in enumerate(manifests[fork:], start=fork):
        now += 3_600.0 if n == compacted[0] else 30.0
        mine.append(dataclasses.replace(manifest, sent_at=now))
    frame = Outcomes([_run("b", manifests[:fork], mine)], "b").compactions()
    first = frame.iloc[0]
    assert first["request"] == compacted[0]
    assert first["gap_seconds"] == 3_600.0 and bool(first["cold"])
    assert first["rewritten"] == 0
    assert not frame.iloc[1:]["cold"].any()
