"""A run's model metered while it goes forward: each request checked against the call's
`Budget` before it is sent, each reply charged to the run (`MeteredModel`) — and the run's
spent dollars and replies from the response cache written to its record afterwards.

The agent's own model objects are put back when the run ends, so a branch's run 0, driven by
hand or shown in a Lab after `run_forward`, holds the model it was made with.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from ctxlab.analysis._budget import Budget, MeteredModel
from ctxlab.fork._branch import BranchRun
from ctxlab.fork._recorded_model import RecordedModel
from ctxlab.models import Model

__all__ = ["metered", "run_key", "stopped_by_budget"]


def run_key(run: BranchRun) -> str:
    """The name a run's replies are charged under: ``branch#run``."""
    return f"{run.branch.name}#{run.run}"


@contextlib.contextmanager
def metered(run: BranchRun, budget: Budget) -> Iterator[None]:
    """Meter ``run``'s agent's models (reasoning and summaries) against ``budget`` while the
    block runs, then write what the run spent to its record."""
    agent = run.agent
    assert agent is not None
    key = run_key(run)
    model, summary = agent.model, agent.summary_model
    handed: list[tuple[RecordedModel, Model]] = []
    made: dict[int, Model] = {}

    def wrap(one: Model) -> Model:
        if id(one) not in made:
            if isinstance(one, RecordedModel):
                # The recording's replies were paid when it was made; the model it hands over
                # to is what this run pays for.
                if one.then is not None and not isinstance(one.then, MeteredModel):
                    handed.append((one, one.then))
                    one.then = MeteredModel(one.then, budget, key)
                made[id(one)] = one
            else:
                made[id(one)] = MeteredModel(one, budget, key)
        return made[id(one)]

    agent.model, agent.summary_model = wrap(model), wrap(summary)
    try:
        yield
    finally:
        agent.model, agent.summary_model = model, summary
        for recorded, then in handed:
            recorded.then = then
        mine = [c for c in budget.charges if c.key == key]
        run.spent = math.fsum(c.spent for c in mine)
        run.from_cache = sum(c.from_cache for c in mine)


def stopped_by_budget(run: BranchRun, budget: Budget) -> bool:
    """Whether a request of ``run`` was refused at the cap: however its call then failed (the
    refusal itself, or a compaction that could not summarize), the cap stopped it."""
    return run_key(run) in budget.refused
