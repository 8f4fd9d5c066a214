"""Each run of a branch keeps its own session log: its first turn holds the history before the
fork and a ``fork`` event saying where it came from; its own turns follow; the origin's log is
never written (read here with sqlite3, not with ctxlab)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ctxlab.fork import run_forward
from tests.fork.helpers import cut_branch, demo_session, file_hash


def _rows(log: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(log)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


async def test_each_run_logs_the_history_before_the_fork_then_its_own_turns(
    tmp_path: Path,
) -> None:
    session = await demo_session(tmp_path)
    origin = file_hash(session.log)
    branch = await cut_branch(session.agent, 3, tmp_path / "b")
    outcomes = await run_forward(branch, runs=2)
    for run in outcomes.runs:
        log = run.branch.folder / f"run-{run.run}" / "session.sqlite"
        first = _rows(log, "SELECT kind, payload FROM events WHERE turn = 1 ORDER BY seq")
        messages = [json.loads(p) for k, p in first if k == "message"]
        assert len(messages) == len(branch.point.history)
        assert messages[0]["content"][0]["text"].startswith("The test suite of the ledger")
        ((event,),) = [(json.loads(p),) for k, p in first if k == "fork"]
        assert event == {
            "step": 3,
            "origin": session.agent.session_id,
            "branch": "cut",
            "arrival": "as_it_was",
        }
        turns = _rows(log, "SELECT MAX(turn) FROM turns")[0][0]
        builds = _rows(log, "SELECT COUNT(*) FROM events WHERE kind = 'context_build'")[0][0]
        steps = sum(m.purpose == "reasoning" for m in run.manifests)
        # The fork's turn, the call's opening turn, then one turn per step of its own.
        assert turns == 2 + steps and builds == len(run.manifests)
        # The run's session differs from the origin's: never one session of a shared log.
        (session_id,) = _rows(log, "SELECT session_id FROM sessions")[0]
        assert session_id != session.agent.session_id
    assert file_hash(session.log) == origin
