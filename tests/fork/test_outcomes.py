"""Outcomes differ where the context differs and agree where it does not: a fork under the
original's config (the control) does what the session did after the fork — the same actions
(read from the histories, not from ctxlab's divergence measure), steps, reply and verdict — and
a config that changes nothing of this session agrees too; configs that cut what the task
needs cost steps or the task, and their contexts part from the reference at the fork."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.agent import Agent
from ctxlab.analysis._prices import price_for
from ctxlab.demo import DEMO_WORKSPACE, demo_config
from ctxlab.fork import Outcomes, fork, run_forward
from ctxlab.messages import AssistantMessage, TextBlock
from tests.fork.helpers import Session, check_tests, demo_session, project_tests_pass, tree_hash
from tests.strategies import SETTINGS

SONNET = price_for("claude-sonnet-4-6")
"""The demo model has no price of its own (unpriced): its runs are priced as Sonnet here."""


def _actions(history: Any, after: int) -> list[tuple[str, str]]:
    """The tool calls of ``history`` from message ``after`` on (name and input)."""
    return [
        (u.name, u.input_json)
        for m in list(history)[after:]
        if isinstance(m, AssistantMessage)
        for u in m.tool_uses
    ]


def _reply(agent: Agent) -> str:
    last = agent.history[-1]
    assert isinstance(last, AssistantMessage)
    return "\n".join(b.text for b in last.content if isinstance(b, TextBlock))


async def _outcomes(session: Session, at: int, tmp: Path, **configs: object) -> Outcomes:
    branches = [
        await fork(
            session.agent,
            at=at,
            config=config,  # type: ignore[arg-type]
            name=name,
            workspace=DEMO_WORKSPACE,
            root=tmp,
        )
        for name, config in configs.items()
    ]
    return await run_forward(branches, runs=2, check=check_tests, max_steps=12, price=SONNET)


@pytest.mark.parametrize("at", [0, 2, 3])
async def test_the_same_config_does_what_the_session_did_after_the_fork(
    tmp_path: Path, at: int
) -> None:
    session = await demo_session(tmp_path)
    agent = session.agent
    steps = sum(m.purpose == "reasoning" for m in agent.manifests)
    # A field this session never reaches (it sends no image): its contexts are the same too.
    unused = demo_config(max_image_num=3)
    outcomes = await _outcomes(session, at, tmp_path / "b", original=None, unused=unused)
    frame = outcomes.frame()
    history_at = _logged_messages(session.log, at + 1)  # the messages before step `at`
    assert project_tests_pass(session.workspace)  # what the session's own run ended with
    for run in outcomes.runs:
        assert run.agent is not None and run.error is None
        assert _actions(run.agent.history, history_at) == _actions(agent.history, history_at)
        assert run.reply == _reply(agent)
    assert list(frame["steps"]) == [steps - at] * 4
    assert list(frame["passed"]) == [True] * 4
    assert frame["diverges_at"].isna().all()


def _logged_messages(log: Path, turn: int) -> int:
    """How many messages the session's log holds up to ``turn`` (read with sqlite3)."""
    db = sqlite3.connect(log)
    try:
        ((count,),) = db.execute(
            "SELECT COUNT(*) FROM events WHERE kind = 'message' AND turn <= ?", (turn,)
        )
    finally:
        db.close()
    return int(count)


async def test_cutting_configs_cost_steps_or_the_task_from_where_their_context_parts(
    tmp_path: Path,
) -> None:
    session = await demo_session(tmp_path)
    at = 2
    outcomes = await _outcomes(
        session,
        at,
        tmp_path / "b",
        original=None,
        cut=demo_config(tool_result_limit=300),
        eager=demo_config(trigger_ratio=0.5),
    )
    table = outcomes.summary().set_index("branch")
    assert table.loc["original", "steps"] == 4 and table.loc["original", "passed"] == 2
    assert table.loc["cut", "steps"] == 5 and table.loc["cut", "passed"] == 2  # a re-read
    assert table.loc["eager", "passed"] == 0 and table.loc["eager", "errors"] == 2
    assert table.loc["original", "cost"] < table.loc["eager", "cost"]
    # Their contexts part from the reference's at the fork itself: their first request.
    assert table.loc["cut", "diverges_at"] == at and table.loc["eager", "diverges_at"] == at
    assert pd.isna(table.loc["original", "diverges_at"])


_ORIGIN: dict[str, Session] = {}


@settings(SETTINGS, max_examples=6)
@given(
    at=st.integers(0, 4),
    limit=st.sampled_from([90, 150, 300, 800, 1500, 4000]),
    trigger=st.sampled_from([0.45, 0.6, 0.8, 0.9]),
)
async def test_where_contexts_never_part_outcomes_agree(
    tmp_path_factory: Any, at: int, limit: int, trigger: float
) -> None:
    if "session" not in _ORIGIN:
        _ORIGIN["session"] = await demo_session(tmp_path_factory.mktemp("origin"))
    session = _ORIGIN["session"]
    tree = tree_hash(session.workspace)
    config = demo_config(tool_result_limit=limit, trigger_ratio=trigger)
    branches = [
        await fork(session.agent, at=at, name=n, config=c, workspace=DEMO_WORKSPACE, root=r)
        for n, c, r in (
            ("reference", None, tmp_path_factory.mktemp("r")),
            ("drawn", config, tmp_path_factory.mktemp("d")),
        )
    ]
    outcomes = await run_forward(branches, check=check_tests, max_steps=10)
    reference, drawn = outcomes.frame().to_dict("records")
    same = ("steps", "passed", "reply", "error")
    if pd.isna(drawn["diverges_at"]):
        assert [drawn[k] for k in same] == [reference[k] for k in same]
    elif [drawn[k] for k in same] != [reference[k] for k in same]:
        assert drawn["diverges_at"] >= at  # it parted at the fork or later, never before
    assert tree_hash(session.workspace) == tree
