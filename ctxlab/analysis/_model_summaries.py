"""`ModelSummaries`: a what-if's compactions summarized by the user's own model, under a dollar
cap, in place of ctxlab's offline extract (`extractive_summarizer`).

Before a config is replayed with the model, it is replayed offline (the extract, which costs
nothing) and its summary calls — the requests the replay would send, each already sized by the
pipeline (`summary_call`) — are priced at the summarizer model's price: input as fresh (no cache
read), and an output of the model's ``max_output_tokens`` (else `DEFAULT_OUTPUT`) for each. That
is the estimate; a call whose estimates, with what was spent before, pass the cap is refused
(`OverBudget`) before any summary call is sent. The model's summaries may compact otherwise than
the extract (a longer summary triggers sooner): the cap, checked before every call as the
replies' usage arrives (`MeteredModel`), bounds what the estimate missed. Once the cap is
reached, each later compaction's summary is refused unsent: it fails as a summary that could not
be made — falling back to truncation, or ending the replay, as the config's
``compression_fallback_to_truncation`` says — and its record says "budget reached".
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._budget import Budget, MeteredModel, dollars
from ctxlab.analysis._prices import price_for
from ctxlab.exceptions import OverBudget, UsageError
from ctxlab.messages._request import ModelRequest
from ctxlab.models import Model
from ctxlab.pipeline import Summarizer, SummaryRequest, extractive_summarizer
from ctxlab.pipeline._summary_calls import summary_request_tokens
from ctxlab.tokens import TokenCache
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    # Only named: the shapes module sits above replay, which uses this one.
    from ctxlab.analysis._shapes import SentSummary

__all__ = ["DEFAULT_OUTPUT", "ModelSummaries", "metered_summarizer"]

DEFAULT_OUTPUT = 4_096
"""Output tokens assumed per summary call when the model names no ``max_output_tokens``."""


class ModelSummaries:
    """Summaries by ``model`` for a what-if, its calls charged to one `Budget` of ``cap``
    USD (None: counted, no cap) across every config and every replay of the what-if."""

    def __init__(self, model: Model, cap: float | None) -> None:
        if isinstance(model, type) or not isinstance(model, Model):
            msg = (
                "summarizer must be a ctxlab Model (AnthropicModel, OpenAIModel, ...) that writes "
                f"the summaries, or None for ctxlab's offline extract; got {shown(model)}"
            )
            raise UsageError(msg)
        self.budget = Budget(cap)
        self.model = MeteredModel(model, self.budget, "summaries")

    @property
    def name(self) -> str:
        """The summarizer model's name."""
        return self.model.name

    def estimate(self, calls: Sequence[SentSummary]) -> float:
        """USD of ``calls`` (an offline replay's summary calls) by the model (see the module)."""
        return self.estimate_tokens([c.manifest.estimated_input_tokens for c in calls])

    def estimate_tokens(self, inputs: Sequence[int]) -> float:
        """USD of summary calls of ``inputs`` tokens each, fresh, each with a whole output."""
        price = price_for(self.model.name)
        output = self.model.max_output_tokens or DEFAULT_OUTPUT
        return math.fsum(
            (max(tokens, 0) * price.at(tokens).input + output * price.output) / 1_000_000
            for tokens in inputs
        )

    def refuse_over(self, estimate: float, configs: Sequence[str]) -> None:
        """`OverBudget` when ``estimate`` (of ``configs``' summaries), with what was spent,
        passes the cap, or cannot be priced under one."""
        cap = self.budget.cap
        if cap is None:
            return
        spent = self.budget.spent
        if math.isnan(estimate):
            msg = (
                f"the summaries cannot be kept under budget_usd={cap:g}: model "
                f"{self.model.name!r} has no known price"
            )
            raise OverBudget(msg, estimate=estimate, cap=cap)
        if spent + estimate > cap:
            msg = (
                f"the summaries by {self.model.name} were not started: estimated "
                f"{dollars(estimate)} for configs {list(configs)} (their offline replays' summary "
                f"calls, fresh input and {self.model.max_output_tokens or DEFAULT_OUTPUT:,} "
                f"output tokens each), {dollars(spent)} already spent, past the budget_usd cap "
                f"of {dollars(cap)}. Replay fewer configs, a larger window (fewer compactions), "
                "or raise budget_usd"
            )
            raise OverBudget(msg, estimate=estimate, cap=cap)

    async def __call__(
        self, request: SummaryRequest, context: ModelRequest | None
    ) -> Mapping[str, Any]:
        """The summary of ``request``, by the model (``context``: the last request, for its
        cached form); `BudgetReached` unsent once the cap is reached."""
        return await self.model.summarize(request, context=context)


async def metered_summarizer(
    model: Model,
    cap: float | None,
    offline: Callable[[Summarizer], AsyncIterator[Any]],
    cache: TokenCache,
) -> Summarizer:
    """A `Summarizer` by ``model`` under ``cap``, for `replay`: refused (`OverBudget`) when the
    summary requests of an offline pass (``offline`` run with the extract) estimate past it."""
    summaries = ModelSummaries(model, cap)
    if summaries.budget.cap is not None:
        asked: list[int] = []

        async def extract(request: SummaryRequest) -> Mapping[str, Any]:
            asked.append(summary_request_tokens(request, cache))
            return await extractive_summarizer(request)

        async for _ in offline(extract):
            pass
        summaries.refuse_over(summaries.estimate_tokens(asked), ["replay"])

    async def summarize(request: SummaryRequest) -> Mapping[str, Any]:
        return await summaries(request, None)

    return summarize
