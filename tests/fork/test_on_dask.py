"""Many forks × configs on Dask, through the sweep's task machinery: each run made on a worker
from its branch (the branch and its counter travel by pickle), the same outcomes as in this
process, and a run whose worker cannot run it a row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done
from ctxlab.exceptions import RateLimitError
from ctxlab.fork import fork, run_forward
from ctxlab.models import FunctionModel
from tests.analysis.conftest import cluster  # noqa: F401 - the LocalCluster fixture
from tests.fork.helpers import demo_session, tree_hash


def _rate_limited(request: object, info: object) -> str:
    """A model answer that fails as a provider under load does (run on a worker)."""
    raise RateLimitError("rate-limited (429): wait")


def _values(column: pd.Series) -> list[object]:
    return [None if pd.isna(v) else v for v in column]


SAME = ("branch", "run", "steps", "requests", "compactions", "passed", "reply", "error")


async def test_runs_on_a_local_cluster_give_the_outcomes_of_this_process(
    tmp_path: Path,
    cluster: tuple[Any, Any],  # noqa: F811
) -> None:
    session = await demo_session(tmp_path)
    tree = tree_hash(session.workspace)
    configs = {"original": None, "cut": demo_config(tool_result_limit=300)}
    branches = [
        await fork(
            session.agent,
            at=at,
            config=c,
            name=f"{n}@{at}",
            workspace=DEMO_WORKSPACE,
            root=tmp_path / "b",
        )
        for at in (1, 3)
        for n, c in configs.items()
    ]
    failing = await fork(
        session.agent,
        at=1,
        name="fails",
        model=FunctionModel(_rate_limited, context_window=8_000),
        workspace=DEMO_WORKSPACE,
        root=tmp_path / "b",
    )
    here = await run_forward(branches, check=task_done, max_steps=10)
    there = await run_forward(
        [*branches, failing], runs=2, check=task_done, max_steps=10, executor=cluster[1]
    )
    local, everything = here.frame(), there.frame()
    # A branch whose model errs on the worker is a row with its error; the others finish.
    failed = everything[everything["branch"] == "fails"]
    assert list(failed["error"]) == ["RateLimitError: rate-limited (429): wait"] * 2
    remote = everything[everything["branch"] != "fails"].reset_index(drop=True)
    assert len(remote) == 8 and remote["error"].isna().all()
    assert remote["passed"].all()
    # The same figures as here, for each of a branch's two runs there.
    for nth in (1, 2):
        one = remote[remote["run"] == nth].reset_index(drop=True).assign(run=0)
        for column in SAME:
            assert _values(one[column]) == _values(local[column]), column
        assert list(one["diverges_at"]) == list(local["diverges_at"])
    # Each worker run had a folder of its own, made beside the branch's others.
    folders = {r.workspace for r in there.runs}
    assert len(folders) == 10 and not folders & {r.workspace for r in here.runs}
    assert sorted({r.run for r in there.runs}) == [1, 2]  # after run 0, made here
    assert all(r.agent is None and r.manifests for r in there.runs)
    assert tree_hash(session.workspace) == tree
