"""What a run's model is shown does not depend on the run's folder: two runs of a deterministic
model, in folders named ``run-1`` and ``run-10`` under roots of other lengths, send the same
requests — equal input tokens and equal cost — and their offload hints name files a run's
tools can read (paths relative to its workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.analysis import price_for
from ctxlab.demo import DEMO_WORKSPACE, demo_config
from ctxlab.fork import Outcomes, fork
from ctxlab.fork._forward import forward
from ctxlab.pipeline import TRUNCATION_MARKER
from tests.fork.helpers import demo_session

SONNET = price_for("claude-sonnet-4-6")


@pytest.mark.parametrize("arrival", ["as_it_was", "from_start"])
async def test_two_runs_of_a_deterministic_model_cost_the_same(
    tmp_path: Path, arrival: str
) -> None:
    session = await demo_session(tmp_path / "s")
    frames = []
    for root in ("b", "a-much-longer-folder-name-for-these-branches/and/deeper"):
        branch = await fork(
            session.agent,
            at=3,
            config=demo_config(tool_result_limit=250),
            arrival=arrival,  # type: ignore[arg-type]
            workspace=DEMO_WORKSPACE,
            root=tmp_path / root,
        )
        # Runs 1 and 10: folder names that tokenize differently.
        runs = [await forward(await branch.spawn(n), None, 6, None) for n in (1, 10)]
        outcomes = Outcomes(runs, branch.name, price=SONNET)
        frames.append(outcomes.frame())
        for run in outcomes.runs:
            text = "".join(m.model_dump_json() for r in run.requests if r for m in r.messages)
            assert TRUNCATION_MARKER in text  # the grid offloads: its hints are shown
            assert str(branch.folder) not in text and str(tmp_path) not in text
    tokens = [t for f in frames for t in f["tokens"]]
    costs = [c for f in frames for c in f["cost"]]
    assert len(set(tokens)) == 1 and tokens[0] > 0, tokens
    assert len(set(costs)) == 1 and costs[0] > 0, costs
