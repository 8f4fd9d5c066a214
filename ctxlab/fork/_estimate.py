"""`estimate_of`: what a `run_forward` call may cost, before it runs — the figure its
``budget_usd`` cap is checked against.

Per branch, one request is priced as the largest request the branch's telling sent before the
fork (its estimated input tokens) or the request it sent at the fork's step, counted, whichever
is larger (at the very start, with nothing sent: the conversation, counted, at most the model's
window), **all of it as fresh input** — no cache read assumed, though a real run
reads most of its prefix from the provider's cache at a tenth of the price — plus the largest
output the origin's replies reported (else the model's ``max_output_tokens``, else
`DEFAULT_OUTPUT`). A run is ``max_steps`` such requests: the most it may make. The whole call
is that, times ``runs``, summed over the branches. So the estimate sits on the upper side for a
run's reasoning requests (no cache, every step used), and under it where a run's requests grow
past the fork's size or it compacts (a summary call is one more request): the cap, checked as
replies arrive, bounds those.

A branch replayed from its recording (`RecordedModel` with no model to hand over to) sends
nothing and costs $0; one that hands over is priced as the model it hands over to.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.agent._forkpoint import REASONING
from ctxlab.analysis._budget import dollars
from ctxlab.analysis._prices import Price, price_for
from ctxlab.fork._branch import Branch, _made
from ctxlab.fork._recorded_model import RecordedModel
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.models import Model
from ctxlab.tokens import default_counter

__all__ = ["DEFAULT_OUTPUT", "BranchEstimate", "ForwardEstimate", "estimate_of"]

DEFAULT_OUTPUT = 4_096
"""Output tokens per request assumed when neither the origin nor the model says."""


@dataclass(frozen=True)
class BranchEstimate:
    """One branch's estimate: a request's tokens and price, and a run's dollars."""

    branch: str
    model: str
    """The model its runs are priced as."""
    input_tokens: int
    output_tokens: int
    per_request: float
    """USD of one request (NaN: the model has no known price)."""
    per_run: float
    """USD of one run: ``max_steps`` requests."""


@dataclass(frozen=True)
class ForwardEstimate:
    """The estimate of a whole `run_forward` call (see the module for how it is made)."""

    branches: tuple[BranchEstimate, ...]
    runs: int
    max_steps: int

    @property
    def total(self) -> float:
        """USD of the whole call: every branch's ``per_run`` × ``runs``."""
        return math.fsum(b.per_run * self.runs for b in self.branches)

    def __str__(self) -> str:
        parts = ", ".join(
            f"{b.branch} {dollars(b.per_run)}/run ({b.model}: {b.input_tokens:,} in + "
            f"{b.output_tokens:,} out per request)"
            for b in self.branches
        )
        return (
            f"estimated {dollars(self.total)} for {self.runs} run(s) of {len(self.branches)} "
            f"branch(es), up to max_steps={self.max_steps} requests each, no cache read "
            f"assumed: {parts}"
        )


def estimate_of(
    branches: list[Branch], *, runs: int, max_steps: int, price: Price | None = None
) -> ForwardEstimate:
    """The estimate of running ``branches`` forward ``runs`` times each (see the module)."""
    return ForwardEstimate(
        tuple(_branch_estimate(b, max_steps, price) for b in branches), runs, max_steps
    )


def _branch_estimate(branch: Branch, max_steps: int, price: Price | None) -> BranchEstimate:
    model = _run_model(branch)
    if model is None:  # a replay of the recording, with nothing to hand over to
        return BranchEstimate(branch.name, "the recording", 0, 0, 0.0, 0.0)
    sent = [m for m in branch.point.manifests if m.purpose in REASONING]
    tokens = max([0, *(max(m.estimated_input_tokens, 0) for m in sent)])
    request = branch.point.request
    if request is not None:
        schemas = json.dumps([dataclasses.asdict(t) for t in request.tools])
        tokens = max(tokens, _counted(request.system + schemas, request.messages))
    elif not sent:
        # Nothing sent yet: the conversation as it stands, which no request exceeds the window.
        conversation = branch.point.state.conversation
        tokens = min(_counted("", conversation), model.context_window)
    outputs = [m.provider_usage.output_tokens for m in sent if m.provider_usage is not None]
    output = max(outputs) if outputs else (model.max_output_tokens or DEFAULT_OUTPUT)
    billed = (price or price_for(model.name)).at(tokens)
    one = (tokens * billed.input + output * billed.output) / 1_000_000
    return BranchEstimate(branch.name, model.name, tokens, output, one, one * max_steps)


def _counted(system: str, messages: Sequence[UserMessage | AssistantMessage]) -> int:
    """The tokens of ``messages`` as JSON and ``system`` (as an offline model reports usage:
    a little above the text alone)."""
    text = "".join(m.model_dump_json() for m in messages) + system
    return default_counter().count_text(text)


def _run_model(branch: Branch) -> Model | None:
    """The model a run of ``branch`` sends its requests to (None: it sends none)."""
    if isinstance(branch.model, Model):
        model = branch.model
    elif branch._hand is not None and branch._hand.agent is not None:
        model = branch._hand.agent.model  # run 0's, made by `fork`: no other made to see
    else:
        model = _made(branch.model)
    if isinstance(model, RecordedModel):
        return model.then
    return model
