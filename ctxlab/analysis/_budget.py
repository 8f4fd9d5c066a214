"""`Budget`: dollars spent under a ``budget_usd`` cap, summed from each reply's usage as the
replies arrive, and `MeteredModel`, the model wrapper that sends no request once the cap is
reached — what `ctxlab.fork.run_forward` and the what-if's ``summarizer=`` run a real model
under.

A reply is charged at its usage (`usage_cost`: input, 5-minute and 1-hour cache writes, cache
reads and output) priced by ctxlab's table for the model that answered (or the price given); a
reply from a response cache (``ModelResponse.from_cache``) is charged $0; a reply without usage
is charged ctxlab's own count of its request and answer (`local_usage`), never $0. A reply no
price is known for makes the spent dollars unknown (NaN): the cap counts as reached, since it can
no longer be kept.

The check is made before each request: a request already sent when another one reaches the cap
is paid all the same, so what a capped call spends stays under the cap plus the requests in
flight at that moment (one per run running side by side).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.analysis._prices import Price, price_for
from ctxlab.analysis._usage_cost import usage_cost
from ctxlab.config._sections import ProviderEdits
from ctxlab.exceptions import BudgetReached, UsageError
from ctxlab.manifest import Purpose
from ctxlab.messages import ProviderUsage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import Model, ModelResponse
from ctxlab.models._base import TextCallback, local_usage
from ctxlab.pipeline import SummaryRequest
from ctxlab.tokens import TokenCounter
from ctxlab.util._checks import shown

__all__ = ["Budget", "Charge", "MeteredModel", "checked_budget", "dollars"]

MAX_BUDGET_USD = 1_000_000.0
"""The largest cap taken (a cap is a guard: a figure past this is a typo)."""


def checked_budget(budget_usd: object) -> float | None:
    """``budget_usd`` as dollars (None: no cap); `UsageError` unless it is a positive finite
    number of dollars up to `MAX_BUDGET_USD`."""
    if budget_usd is None:
        return None
    # Compared, never converted: an int too large for a float is refused, not an overflow;
    # NaN and infinity fail the comparison.
    if (
        isinstance(budget_usd, bool)
        or not isinstance(budget_usd, int | float)
        or not 0 < budget_usd <= MAX_BUDGET_USD
    ):
        msg = (
            f"budget_usd must be a number of dollars above 0 (at most {MAX_BUDGET_USD:,.0f}), or "
            f"None for no cap; got {shown(budget_usd)}"
        )
        raise UsageError(msg)
    return float(budget_usd)


def dollars(value: float) -> str:
    """``value`` as dollars, to a tenth of a cent (``$0.0123``) — unknown for NaN."""
    return "$unknown" if math.isnan(value) else f"${value:,.4f}"


@dataclass(frozen=True)
class Charge:
    """One reply, and what it cost."""

    key: str
    """Whose reply it is (a run: ``branch#run``)."""
    purpose: str
    """``reasoning``, ``recovery`` or ``summary``."""
    model: str
    """The model the reply is priced as."""
    usage: ProviderUsage | None
    """The provider's usage (ctxlab's count where the reply carried none)."""
    from_cache: bool
    """Whether the reply came from a response cache (nothing paid)."""
    estimated: bool
    """Whether ``usage`` is ctxlab's count (the reply carried no usage)."""
    spent: float
    """USD paid for it: its usage at its price; 0 from the cache; NaN when unpriced."""


class Budget:
    """Dollars spent, reply by reply, against ``cap`` (None: no cap, only counted). ``price``
    prices every reply (None: the table's price of the model that answered). Shared by the
    `MeteredModel` of every run of one call; safe across threads."""

    def __init__(self, cap: float | None = None, *, price: Price | None = None) -> None:
        self.cap = checked_budget(cap)
        self.price = price
        self.charges: list[Charge] = []
        """Every reply charged, in the order they arrived."""
        self.refused: set[str] = set()
        """Whose requests were refused at the cap (their keys)."""
        self._lock = threading.Lock()
        self._spent = 0.0

    @property
    def spent(self) -> float:
        """USD spent so far (NaN once a reply could not be priced)."""
        return self._spent

    @property
    def reached(self) -> bool:
        """Whether no more requests may be sent: the cap is reached (or the spent dollars are
        unknown, so it cannot be kept)."""
        if self.cap is None:
            return False
        return math.isnan(self._spent) or self._spent >= self.cap

    @property
    def note(self) -> str:
        """Where the budget stands: ``stopped: budget reached, $x of $y spent``."""
        cap = "no cap" if self.cap is None else dollars(self.cap)
        return f"stopped: budget reached, {dollars(self._spent)} of {cap} spent"

    def check(self, key: str = "") -> None:
        """`BudgetReached` when the cap is reached: ``key``'s next request must not be sent
        (``key`` is then among `refused`)."""
        if self.reached:
            assert self.cap is not None
            with self._lock:
                self.refused.add(key)
            raise BudgetReached(self.note, spent=self._spent, cap=self.cap)

    def spent_by(self, key: str) -> float:
        """USD spent by the replies of ``key``."""
        with self._lock:
            return math.fsum(c.spent for c in self.charges if c.key == key)

    def charge(
        self,
        key: str,
        response: ModelResponse,
        purpose: str,
        *,
        model: str,
        request: ModelRequest,
        counter: TokenCounter,
    ) -> Charge:
        """Charge ``response`` (the answer to ``request``, for ``key``) and return the charge;
        ``model`` prices it when the reply names no model the table knows."""
        usage, estimated = response.usage, False
        if usage is None:
            usage, estimated = local_usage(request, response.message, counter), True
        name = response.model if price_for(response.model).known else model
        price = self.price or price_for(name)
        spent = 0.0 if response.from_cache else usage_cost(usage, price, purpose).cost
        charge = Charge(key, purpose, name, usage, response.from_cache, estimated, spent)
        with self._lock:
            self.charges.append(charge)
            self._spent += spent
        return charge


class MeteredModel(Model):
    """``model``, each request checked against ``budget`` before it is sent (`BudgetReached`
    once the cap is reached) and each reply charged to it as ``key``. It reads as the model it
    wraps (name, window, counter, limits), so the pipeline prepares the same requests."""

    def __init__(self, model: Model, budget: Budget, key: str = "") -> None:
        if not isinstance(model, Model):
            msg = f"a metered model wraps a ctxlab Model, got {shown(model)}"
            raise UsageError(msg)
        self.model = model
        self.budget = budget
        self.key = key

    # The wrapped model's description, read (and set) through: the pipeline sizes requests
    # for the model that answers them.
    @property
    def name(self) -> str:
        return self.model.name

    @name.setter
    def name(self, value: str) -> None:
        self.model.name = value

    @property
    def context_window(self) -> int:
        return self.model.context_window

    @context_window.setter
    def context_window(self, value: int) -> None:
        self.model.context_window = value

    @property
    def max_output_tokens(self) -> int | None:
        return self.model.max_output_tokens

    @max_output_tokens.setter
    def max_output_tokens(self, value: int | None) -> None:
        self.model.max_output_tokens = value

    @property
    def exact_counts(self) -> bool:
        return self.model.exact_counts

    @exact_counts.setter
    def exact_counts(self, value: bool) -> None:
        self.model.exact_counts = value

    @property
    def server_edits(self) -> ProviderEdits | None:
        return self.model.server_edits

    @server_edits.setter
    def server_edits(self, value: ProviderEdits | None) -> None:
        self.model.server_edits = value

    @property
    def counter(self) -> TokenCounter:
        return self.model.counter

    async def count_tokens(self, request: ModelRequest) -> int:
        # Counting is free (Anthropic's count_tokens bills nothing): not charged.
        return await self.model.count_tokens(request)

    async def load_limits(self) -> None:
        await self.model.load_limits()

    def branch(self) -> Model:
        return MeteredModel(self.model.branch(), self.budget, self.key)

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        self.budget.check(self.key)
        response = await self.model.request(request, purpose=purpose, on_text=on_text)
        self.budget.charge(
            self.key,
            response,
            purpose,
            model=self.model.name,
            request=request,
            counter=self.model.counter,
        )
        return response

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        self.budget.check(self.key)
        if type(self.model).summarize is Model.summarize:
            # The wrapped model asks for summaries by `request`: through this one, charged.
            return await Model.summarize(self, summary, context=context)
        # A model with its own way (an offline extract, a recording's replay): what it sends,
        # if anything, is its own and not charged here.
        return await self.model.summarize(summary, context=context)

    def __repr__(self) -> str:
        return f"MeteredModel({self.model!r}, spent={dollars(self.budget.spent)})"
