"""A fork of a live agent whose config compacts on demand asks as the session did: the rules'
state (requests since the last compaction, the last request's size, what arrived since) is
kept with each step and restored in the branch, so a fork with the same config compacts where
the session did. Before, the branch's rules started afresh: a fork at step 4 of a session that
compacted at 4 and 8 compacted at 8 and 12."""

from __future__ import annotations

from pathlib import Path

from ctxlab.config import OnDemandCompaction
from ctxlab.demo import DEMO_PROMPT, demo_agent, demo_config
from ctxlab.fork import fork, run_forward
from ctxlab.manifest import ContextManifest
from ctxlab.models import DemoModel


def _compacted(manifests: list[ContextManifest]) -> list[int]:
    steps = [m for m in manifests if m.purpose in ("reasoning", "recovery")]
    return [
        n for n, m in enumerate(steps) if any(t.kind == "history_compaction" for t in m.transforms)
    ]


async def test_a_fork_asks_where_the_session_asked(tmp_path: Path) -> None:
    config = demo_config(on_demand=OnDemandCompaction(every_requests=4))
    agent = demo_agent(
        tmp_path / "ws", model=DemoModel(context_window=200_000), context_config=config
    )
    await agent(DEMO_PROMPT)
    original = _compacted(agent.manifests)
    assert original[:2] == [4, 8]
    for at in (4, 3):
        branch = await fork(agent, at=at, root=tmp_path / f"b{at}")
        (run,) = (await run_forward(branch)).runs
        asked = [at + n for n in _compacted(run.manifests)]
        # The branch's first compaction is the session's next one: at 4 itself, from 3 too.
        assert asked[0] == 4, (at, asked)
        if at == 3:
            assert asked[:2] == original[:2]


async def test_a_point_that_kept_no_rules_starts_them_afresh(tmp_path: Path) -> None:
    # The control: the same fork with the rules' state dropped from its point asks 4 requests
    # into the branch, not where the session did.
    config = demo_config(on_demand=OnDemandCompaction(every_requests=4))
    agent = demo_agent(
        tmp_path / "ws", model=DemoModel(context_window=200_000), context_config=config
    )
    await agent(DEMO_PROMPT)
    for mark in agent._preparer.marks.values():
        mark.asker = None
    branch = await fork(agent, at=3, root=tmp_path / "b3")
    (run,) = (await run_forward(branch)).runs
    assert _compacted(run.manifests)[0] + 3 != 4
