"""What a run forward records of itself, read against the run's own manifests and model calls:
the compactions it made (control: a config that makes none), the step limit it stopped at, and
the requests its model was sent at each step — a recovery request after an overflow included, so
that step numbers (and where two runs part) stay those of the Lab's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab.demo import DEMO_WORKSPACE, demo_config
from ctxlab.exceptions import ContextOverflowError
from ctxlab.fork import fork, run_forward
from ctxlab.fork._outcomes import pd_na
from ctxlab.messages._request import ModelRequest
from ctxlab.models import MemorylessModel
from tests.fork.helpers import demo_session


async def test_a_run_counts_the_compactions_its_manifests_show(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branches = [
        await fork(
            session.agent,
            at=2,
            name=name,
            config=config,
            workspace=DEMO_WORKSPACE,
            root=tmp_path / name,
        )
        for name, config in (
            ("compacts", demo_config(trigger_ratio=0.7)),
            ("never", demo_config(trigger_ratio=0.8)),  # the control: fits without one
            ("often", demo_config(trigger_ratio=0.5)),  # compacts at every step
        )
    ]
    outcomes = await run_forward(branches, max_steps=12)
    for run in outcomes.runs:
        shown = sum(t.kind == "history_compaction" for m in run.manifests for t in m.transforms)
        summaries = sum(m.purpose == "summary" for m in run.manifests)
        assert run.compactions == shown == summaries
        assert outcomes.row(run)["compactions"] == shown
        # Steps after each compaction: one figure per compaction the run's events counted,
        # fewer after each later one, never more than the run's steps.
        after = outcomes.row(run)["after_compactions"]
        assert len(after) == run.compactions
        assert list(after) == sorted(after, reverse=True) and all(0 < n <= 12 for n in after)
    assert [r.compactions for r in outcomes.runs][:2] == [1, 0]
    assert outcomes.runs[2].compactions >= 3


async def test_a_run_stops_at_its_step_limit(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=2, name="short", workspace=DEMO_WORKSPACE, root=tmp_path)
    outcomes = await run_forward(branch, max_steps=2)
    row = outcomes.frame().iloc[0]
    assert row["steps"] == 2
    assert row["reply"] is None
    assert "the agent made 2 reasoning requests without replying" in row["error"]
    # Control: with room, the same branch replies (it needs four steps).
    again = await fork(session.agent, at=2, name="long", workspace=DEMO_WORKSPACE, root=tmp_path)
    whole = (await run_forward(again, max_steps=12)).frame().iloc[0]
    assert whole["steps"] == 4 and whole["reply"] is not None and whole["error"] is None


class _OverflowOnce(MemorylessModel):
    """`MemorylessModel`, whose provider refuses the first reasoning request as too long."""

    def __init__(self) -> None:
        super().__init__(context_window=8_000)
        self.sent: list[tuple[str, ModelRequest]] = []

    async def request(self, request: ModelRequest, **kwargs: Any) -> Any:
        purpose = kwargs.get("purpose", "reasoning")
        self.sent.append((purpose, request))
        if len(self.sent) == 1:
            raise ContextOverflowError("prompt is too long: 9000 tokens > 8000 maximum")
        return await super().request(request, **kwargs)


async def test_a_recovery_request_is_recorded_at_its_step(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    models: list[_OverflowOnce] = []

    def model() -> _OverflowOnce:
        models.append(_OverflowOnce())
        return models[-1]

    branch = await fork(
        session.agent, at=2, name="overflow", model=model, workspace=DEMO_WORKSPACE, root=tmp_path
    )
    outcomes = await run_forward(branch, max_steps=12)
    run = outcomes.runs[0]
    assert run.error is None and run.reply is not None
    steps = [m.purpose for m in run.manifests if m.purpose in ("reasoning", "recovery")]
    assert steps[:2] == ["reasoning", "recovery"]
    # The requests recorded are what the model was sent at each step, the refused one and the
    # recovery that replaced it included (the summary call is no step).
    sent = [r for purpose, r in models[-1].sent if purpose != "summary"]
    assert run.requests == sent
    assert len(run.requests) == len(steps)


async def test_a_branch_driven_by_hand_is_run_forward_from_its_fork_again(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=2, name="hand", workspace=DEMO_WORKSPACE, root=tmp_path)
    fresh = await fork(session.agent, at=2, name="fresh", workspace=DEMO_WORKSPACE, root=tmp_path)
    # Driven by hand to its reply, the branch's agent is past the fork: run 0 is a new run.
    await branch.agent.call(None)
    outcomes = await run_forward([fresh, branch])
    untouched, run = outcomes.runs
    assert untouched.agent is fresh.agent  # control: not driven, run 0 is the branch's agent
    assert run.agent is not branch.agent
    assert run.workspace != branch.agent.workspace
    row = outcomes.row(run)
    assert (row["steps"], row["diverges_at"]) == (4, None)  # from the fork, as the other
    assert row["reply"] == outcomes.row(untouched)["reply"] is not None


async def test_the_check_a_verdict_async_or_not_and_one_that_raises_a_note(
    tmp_path: Path,
) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=2, name="b", workspace=DEMO_WORKSPACE, root=tmp_path)
    seen: list[tuple[Any, Any]] = []

    async def fails(run: Any) -> bool:
        seen.append((run.reply, run.workspace))
        return False

    def raises(run: Any) -> bool:
        msg = "no such file: report.xml"
        raise FileNotFoundError(msg)

    judged = await run_forward(branch, check=fails, max_steps=12)
    row = judged.frame().iloc[0]
    assert row["passed"] is not pd_na() and not row["passed"]  # failed, not unchecked
    assert row["notes"] is None
    # The check saw the finished run: its reply and its own folder.
    assert seen == [(judged.runs[0].reply, judged.runs[0].workspace)] and seen[0][0]
    broken = await run_forward(branch, check=raises, max_steps=12)
    row = broken.frame().iloc[0]
    assert row["passed"] is pd_na()
    assert row["notes"] == "the check raised FileNotFoundError: no such file: report.xml"
    assert row["reply"] is not None and row["error"] is None  # the run itself went well
    # A check runs on a run that stopped short too (it may have done the work).
    stopped = await run_forward(branch, check=lambda run: 1, max_steps=1)
    row = stopped.frame().iloc[0]
    assert row["error"] is not None and bool(row["passed"]) is True


class _Recording(MemorylessModel):
    """`MemorylessModel`, keeping what it is asked: requests by purpose, and summaries."""

    def __init__(self) -> None:
        super().__init__()
        self.purposes: list[str] = []

    async def request(self, request: ModelRequest, **kwargs: Any) -> Any:
        self.purposes.append(kwargs.get("purpose", "reasoning"))
        return await super().request(request, **kwargs)

    async def summarize(self, summary: Any, *, context: Any = None) -> Any:
        self.purposes.append("summary")
        return await super().summarize(summary, context=context)


async def test_a_branch_with_its_own_model_summarizes_with_it(tmp_path: Path) -> None:
    # The origin summarizes with its own model (the default): a branch given another model
    # summarizes with that one, not with the origin's.
    session = await demo_session(tmp_path)
    assert session.agent.summary_model is session.agent.model
    made: list[_Recording] = []

    def model() -> _Recording:
        made.append(_Recording())
        return made[-1]

    branch = await fork(
        session.agent,
        at=2,
        config=demo_config(trigger_ratio=0.7),
        model=model,
        workspace=DEMO_WORKSPACE,
        root=tmp_path,
    )
    outcomes = await run_forward(branch, max_steps=12)
    assert outcomes.runs[0].compactions == 1
    assert made[-1].purposes.count("summary") == 1
    assert branch.agent.summary_model is branch.agent.model
