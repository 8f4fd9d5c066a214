"""What tokens cost: `Price` (USD per million tokens, by how they are billed) and the providers'
published prices by model (`PRICES`, `price_for`), as of 2025 — edit or pass your own."""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import price_number

__all__ = ["PRICES", "Price", "checked_price", "price_for"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    """Writing the cache (Anthropic: 1.25× input for the 5-minute TTL; OpenAI: the input price)."""
    cache_read: float
    """Reading the cache (Anthropic: 0.1× input; OpenAI: the cached-input price)."""
    cache_write_1h: float | None = None
    """Anthropic's 1-hour TTL write (2× input)."""

    def __post_init__(self) -> None:
        # A negative or NaN price would invert or blank every ranking built on it.
        for name in ("input", "output", "cache_write", "cache_read"):
            price_number(getattr(self, name), f"Price.{name}")
        if self.cache_write_1h is not None:
            price_number(self.cache_write_1h, "Price.cache_write_1h")


def checked_price(price: object) -> Price | None:
    """``price`` when it is a `Price` or None; `UsageError` otherwise."""
    if price is not None and not isinstance(price, Price):
        msg = f"price must be a Price (e.g. price_for('claude-sonnet-4-5')), got {price!r}"
        raise UsageError(msg)
    return price


def _anthropic(input_price: float, output_price: float) -> Price:
    return Price(input_price, output_price, input_price * 1.25, input_price * 0.1, input_price * 2)


PRICES: dict[str, Price] = {
    # Anthropic, anthropic.com/pricing (2025): input, output; cache write 1.25×, read 0.1×.
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    # Opus 4.6 to 4.8 are Opus 4.5's price (platform.claude.com's model pages, 2026), not Opus
    # 4's: without their own names they matched "claude-opus-4" and cost three times as much.
    "claude-opus-4-6": _anthropic(5.0, 25.0),
    "claude-opus-4-7": _anthropic(5.0, 25.0),
    "claude-opus-4-8": _anthropic(5.0, 25.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    # OpenAI, platform.openai.com/docs/pricing (2025): input, output, cached input.
    "gpt-4.1": Price(2.0, 8.0, 2.0, 0.5),
    "gpt-4.1-mini": Price(0.4, 1.6, 0.4, 0.1),
    "gpt-4o": Price(2.5, 10.0, 2.5, 1.25),
    "gpt-4o-mini": Price(0.15, 0.6, 0.15, 0.075),
    "gpt-5": Price(1.25, 10.0, 1.25, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.25, 0.025),
}
"""Prices by model name (a dated suffix is matched by prefix: ``claude-sonnet-4-5-20250929``)."""


def price_for(model: str) -> Price:
    """The price of ``model``: an exact name, else the longest known name it starts with;
    ``claude-sonnet-4-6``'s when nothing matches (a stated default, not a guess of the model)."""
    if model in PRICES:
        return PRICES[model]
    matches = [name for name in PRICES if model.startswith(name)]
    return PRICES[max(matches, key=len)] if matches else PRICES["claude-sonnet-4-6"]
