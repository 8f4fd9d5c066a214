"""Each provider's prompt cache as the cost model reads it: the rules (`CacheRules`: from how
many tokens a prefix is cached, in what steps, whether a write is billed) by the model's
provider (`cache_rules_for`), and a session's pricing in a sentence (`pricing_note`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ctxlab.analysis._prices import Price, min_cached_tokens, model_key, price_for
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

__all__ = ["ANTHROPIC_LOOKBACK", "CacheRules", "cache_rules_for", "pricing_note"]

ANTHROPIC_LOOKBACK = 20
"""Content blocks before a breakpoint where Anthropic's prompt cache checks for an earlier
cached prefix ("up to approximately 20 blocks": the prompt-caching guide)."""


@dataclass(frozen=True)
class CacheRules:
    """How a provider caches prompt prefixes (see the module's documentation)."""

    kind: Literal["anthropic", "openai", "google", "none"] = "anthropic"
    min_tokens: int = 1024
    """The shortest cacheable prefix."""
    ttl: Literal["5m", "1h"] = "5m"
    """Anthropic's cache lifetime: what a write costs."""
    step: int = 1
    """Cached lengths are multiples of this (OpenAI: 128)."""
    lookback: int | None = None
    """How many content blocks before a breakpoint the provider looks for a cached prefix
    (Anthropic: 20); None: anywhere in the request."""
    bills_writes: bool = False
    """Whether an automatic cache bills what it writes (OpenAI from GPT-5.6: the model's
    ``cache_write`` price for the request's uncached rest)."""

    @classmethod
    def anthropic(cls, min_tokens: int = 1024, ttl: Literal["5m", "1h"] = "5m") -> CacheRules:
        """Anthropic's explicit breakpoints (the model's minimum: `min_cached_tokens`), each
        looking back `ANTHROPIC_LOOKBACK` blocks for a cached prefix."""
        return cls("anthropic", min_tokens, ttl, 1, ANTHROPIC_LOOKBACK)

    @classmethod
    def openai(cls, *, bills_writes: bool = False) -> CacheRules:
        """OpenAI's automatic prefix cache: from 1,024 tokens, in 128-token steps; writes billed
        from the GPT-5.6 family (``bills_writes``)."""
        return cls("openai", 1024, "5m", 128, None, bills_writes)

    @classmethod
    def google(cls, min_tokens: int = 1024) -> CacheRules:
        """Gemini's implicit cache: automatic from the model's minimum, no write or storage
        charge."""
        return cls("google", min_tokens)

    @classmethod
    def none(cls) -> CacheRules:
        """No cache: every input token at the input price."""
        return cls("none", 0)

    @property
    def label(self) -> str:
        """The rules in words, as the what-if and the report name them."""
        if self.kind == "anthropic":
            write = "2×" if self.ttl == "1h" else "1.25×"
            return (
                f"Anthropic's explicit prompt cache ({self.ttl} TTL: writes {write} input, reads "
                f"0.1×; from {self.min_tokens:,} tokens)"
            )
        if self.kind == "openai":
            writes = "writes 1.25× input" if self.bills_writes else "no write charge"
            return (
                f"OpenAI's automatic prefix cache (from {self.min_tokens:,} tokens in "
                f"{self.step}-token steps, reads at the cached-input price, {writes})"
            )
        if self.kind == "google":
            return (
                f"Google's implicit cache (from {self.min_tokens:,} tokens, reads at the cached "
                "price, no write or storage charge)"
            )
        return "no prompt cache (every input token at the input price)"


def checked_rules(rules: object) -> CacheRules | None:
    """``rules`` when it is `CacheRules` or None; a `UsageError` saying what it takes."""
    if rules is not None and not isinstance(rules, CacheRules):
        msg = (
            "rules must be CacheRules (CacheRules.anthropic(), cache_rules_for('gpt-5')) or "
            f"None (the recording's provider's), got {shown(rules)}"
        )
        raise UsageError(msg)
    return rules


def cache_rules_for(model: str, price: Price | None = None) -> CacheRules:
    """The cache rules of ``model``'s provider, with the model's minimum cacheable prefix:
    Anthropic's, OpenAI's (writes billed from GPT-5.6: its ``cache_write`` above its input
    price) or Google's; no cache for a model whose provider is not known (its cost is unpriced
    unless ``price``, a price you pass, names the provider)."""
    known = price_for(model)
    provider = known.provider if price is None or price.provider is None else price.provider
    minimum = min_cached_tokens(model)
    price = known if price is None else price
    if provider == "anthropic":
        return CacheRules.anthropic(minimum)
    if provider == "openai":
        writes = price.known and price.cache_write > price.input
        return CacheRules.openai(bills_writes=writes)
    if provider == "google":
        return CacheRules.google(minimum)
    return CacheRules.none()


def pricing_note(model: str, price: Price, rules: CacheRules) -> str:
    """What a session's costs are priced as, in a sentence: the price used (model, list price,
    source) and the cache rules, or ``unpriced (model X has no known price)`` — what the
    what-if, the Lab's report and a fork's outcomes show beside their costs."""
    if not price.known:
        if not price.model:
            return "unpriced (the session names no model, so no price is known)"
        return price.label
    named = ""
    if model and price.model and model_key(model) != price.model:
        named = f"{model} priced as "
    return f"{named}{price.label}; {rules.label}"
