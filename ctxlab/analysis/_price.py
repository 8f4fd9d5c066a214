"""What tokens cost: `Price`, USD per million tokens by how they are billed (input, output, cache
writes and reads), with the long-context tier where a provider has one (`LongContext`) and whose
price it is (model, provider, source). `Price.unknown` is the price of a model no table knows:
NaN figures, so that a cost computed from it is never another model's dollars.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import price_number

__all__ = ["FREE", "PROVIDERS", "LongContext", "Price", "Provider", "checked_price"]

Provider = Literal["anthropic", "openai", "google"]

PROVIDERS: dict[Provider, str] = {"anthropic": "Anthropic", "openai": "OpenAI", "google": "Google"}
"""The providers ctxlab prices, by their display names."""

_FIGURES = ("input", "output", "cache_write", "cache_read")


@dataclass(frozen=True)
class Price:
    """USD per million tokens, and whose price it is."""

    input: float
    output: float
    cache_write: float
    """Writing the cache (Anthropic: 1.25× input for the 5-minute TTL; OpenAI from GPT-5.6:
    1.25× input; earlier OpenAI models and Google: no write charge, the input price)."""
    cache_read: float
    """Reading the cache (Anthropic: 0.1× input; OpenAI and Google: the cached-input price)."""
    cache_write_1h: float | None = None
    """Anthropic's 1-hour TTL write (2× input)."""
    long_context: LongContext | None = None
    """The price of a request whose input passes a size, where the provider has one (Gemini 2.5
    Pro above 200k tokens, GPT-5.4 above 272k): every token of that request, output included."""
    model: str = ""
    """The name the price is published under (empty: a price you passed)."""
    provider: Provider | None = None
    """Whose price it is: what `cache_rules_for` follows."""
    source: str = ""
    """Where the price was read, and when."""
    known: bool = True
    """False for `Price.unknown`: no price is known for ``model``."""

    def __post_init__(self) -> None:
        if not self.known:
            return
        # A negative or NaN price would invert or blank every ranking built on it.
        for name in _FIGURES:
            price_number(getattr(self, name), f"Price.{name}")
        if self.cache_write_1h is not None:
            price_number(self.cache_write_1h, "Price.cache_write_1h")
        if self.long_context is not None and not isinstance(self.long_context, LongContext):
            msg = f"Price.long_context must be a LongContext, got {self.long_context!r}"
            raise UsageError(msg)

    @classmethod
    def unknown(cls, model: str) -> Price:
        """The price of a model no table knows: every figure NaN (a cost computed from it is
        NaN, and so is any sum it is part of), said as `label`."""
        nan = math.nan
        return cls(nan, nan, nan, nan, model=model, known=False)

    def at(self, input_tokens: int) -> Price:
        """The price a request of ``input_tokens`` (cached ones included) is billed at: the
        long-context tier's when it passes the tier's size, else this one."""
        tier = self.long_context
        if tier is not None and input_tokens > tier.above:
            return tier.price
        return self

    @property
    def free(self) -> bool:
        """Whether every figure is $0 (a local model, a price passed as 0): every cost is then
        $0, and a ratio of costs (``cost_vs_baseline``) NaN — no ratio to a cost of nothing."""
        tier = self.long_context
        return (
            self.known
            and all(getattr(self, name) == 0 for name in _FIGURES)
            and not self.cache_write_1h
            and (tier is None or tier.price.free)
        )

    @property
    def label(self) -> str:
        """The price in words, with whose it is and its source: what the what-if and the report
        show (``unpriced (model X has no known price)`` for an unknown model)."""
        if not self.known:
            return f"unpriced (model {self.model!r} has no known price)"
        write = (
            "cache writes at the input price"
            if self.cache_write == self.input
            else f"cache write ${_usd(self.cache_write)}"
        )
        figures = (
            f"${_usd(self.input)} input, ${_usd(self.output)} output, cache read "
            f"${_usd(self.cache_read)}, {write} per million tokens"
        )
        tier = self.long_context
        if self.free:
            figures = FREE
        elif tier is not None:
            figures += (
                f"; above {tier.above:,} input tokens ${_usd(tier.price.input)} input, "
                f"${_usd(tier.price.output)} output"
            )
        if not self.model:
            return f"a price you passed: {figures}"
        whose = f"{PROVIDERS[self.provider]}'s " if self.provider else ""
        source = f" — {self.source}" if self.source else ""
        return f"{self.model} at {whose}list price: {figures}{source}"


@dataclass(frozen=True)
class LongContext:
    """A provider's price for long requests: above ``above`` input tokens (cached ones
    included), the whole request is billed at ``price``."""

    above: int
    price: Price


FREE = (
    "$0 for every token (every cost $0, so cost_vs_baseline and cost_vs_no_compaction are NaN: "
    "no ratio to a cost of nothing; compare tokens_sent)"
)
"""How `Price.label` gives a price of $0 for every token (`Price.free`)."""


def _usd(value: float) -> str:
    """A price as prices are written: 3, 2.50, 0.30, 0.075."""
    if float(value).is_integer():
        return f"{value:.0f}"
    text = f"{value:.4f}".rstrip("0")
    return text + "0" if len(text.split(".")[1]) == 1 else text


def checked_price(price: object) -> Price | None:
    """``price`` when it is a `Price` or None; `UsageError` otherwise."""
    if price is not None and not isinstance(price, Price):
        msg = f"price must be a Price (e.g. price_for('claude-sonnet-4-5')), got {price!r}"
        raise UsageError(msg)
    return price
