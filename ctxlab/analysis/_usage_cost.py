"""What a request cost by its bill: the usage the provider reported for it, at its model's price
— what a recording's requests *as recorded* cost wherever the file kept their usage, the
modelled cost (`costs_of_manifests`) only where it did not.

The bill of one request, in USD per million tokens of `Price`:

    input × input price + 5-minute writes × cache_write + 1-hour writes × cache_write_1h
    + reads × cache_read + output × output price

at the long-context tier when its input (input + reads + writes) passes the tier's size
(`Price.at`). Usage whose cache fields do not add up (`untrusted`: a 1-hour part larger than
the writes it is part of) is not taken as a bill: that request is priced by the model, and
said so (`PricedCost.priced_from`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import RequestCost, costs_of_manifests
from ctxlab.analysis._prices import Price, price_for
from ctxlab.manifest import ContextManifest
from ctxlab.messages import ProviderUsage

__all__ = ["PRICED_FROM", "PricedCost", "PricedFrom", "billed_costs", "untrusted", "usage_cost"]

PricedFrom = Literal["usage", "model"]
PRICED_FROM: dict[PricedFrom, str] = {
    "usage": "the provider's usage recorded for the request, at its model's price",
    "model": "ctxlab's cache model (no usage recorded for the request, or usage not trusted)",
}
"""Where a request's cost comes from, and what each says."""


@dataclass(frozen=True)
class PricedCost:
    """A request's cost and where it comes from."""

    cost: RequestCost
    priced_from: PricedFrom
    """``usage`` (its bill) or ``model`` (the cache model's estimate: `PRICED_FROM`)."""


def untrusted(usage: ProviderUsage) -> str:
    """Why ``usage``'s cache fields cannot be taken as a bill ("" when they can): its 1-hour
    writes are more than all its writes. (Negative or non-numeric counts never make a
    `ProviderUsage`: the importers refuse them, naming the field.)"""
    if usage.cache_creation_1h_input_tokens > usage.cache_creation_input_tokens:
        return (
            f"1-hour cache writes {usage.cache_creation_1h_input_tokens:,} exceed the cache "
            f"writes {usage.cache_creation_input_tokens:,} they are part of"
        )
    return ""


def usage_cost(usage: ProviderUsage, price: Price, purpose: str = "reasoning") -> RequestCost:
    """What ``usage`` costs at ``price`` (see the module; NaN for an unpriced model)."""
    billed = price.at(usage.total_input_tokens)
    one_hour = usage.cache_creation_1h_input_tokens
    five_minutes = usage.cache_creation_input_tokens - one_hour
    hour_price = billed.cache_write if billed.cache_write_1h is None else billed.cache_write_1h
    dollars = (
        usage.input_tokens * billed.input
        + five_minutes * billed.cache_write
        + one_hour * hour_price
        + usage.cache_read_input_tokens * billed.cache_read
        + usage.output_tokens * billed.output
    ) / 1_000_000
    return RequestCost(
        usage.input_tokens,
        usage.cache_creation_input_tokens,
        usage.cache_read_input_tokens,
        usage.output_tokens,
        dollars,
        purpose,
        cache_write_1h=one_hour,
    )


def billed_costs(
    manifests: Sequence[ContextManifest],
    price: Price | None = None,
    rules: CacheRules | None = None,
    *,
    model: str = "",
    times: Mapping[str, float] | None = None,
) -> list[PricedCost]:
    """The cost of each of ``manifests`` (in the order they were sent), each by its own bill
    where its ``provider_usage`` is one that adds up — at ``price``, else its model's price
    (`price_for`: a recording may switch models; ``model``'s for a manifest that names none)
    — and by `costs_of_manifests` (at ``price`` and ``rules``, on the clock of ``times``, by
    request id, where the manifests carry none) where it has none.

    Only for manifests whose usage is the bill of that very request: a recording *as
    recorded*, a live agent's. A replayed request carries the usage of the recorded request
    it stands for, which is not its own bill."""
    modelled = costs_of_manifests(
        manifests, price or (price_for(model) if model else None), rules, times=times
    )
    out: list[PricedCost] = []
    prices: dict[str, Price] = {}
    for manifest, estimate in zip(manifests, modelled, strict=True):
        usage = manifest.provider_usage
        # A recorded request shown at a window it overran was sent all the same: its usage is
        # its bill whatever its validation at that window says.
        if usage is None or untrusted(usage):
            out.append(PricedCost(estimate, "model"))
            continue
        name = manifest.model or model
        own = price or prices.get(name)
        if own is None:
            own = prices[name] = price_for(name)
        out.append(PricedCost(usage_cost(usage, own, manifest.purpose), "usage"))
    return out
