"""Each provider's prompt cache as the cost model reads it: the rules (`CacheRules`: from how
many tokens a prefix is cached, in what steps, whether a write is billed) by the model's
provider (`cache_rules_for`), and a session's pricing in a sentence (`pricing_note`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ctxlab.analysis._prices import Price, min_cached_tokens, model_key, price_for
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

__all__ = [
    "ANTHROPIC_LIFETIME",
    "ANTHROPIC_LOOKBACK",
    "GOOGLE_LIFETIME",
    "OPENAI_EXTENDED_LIFETIME",
    "OPENAI_LIFETIME",
    "CacheRules",
    "cache_rules_for",
    "pricing_note",
]

ANTHROPIC_LOOKBACK = 20
"""Content blocks before a breakpoint where Anthropic's prompt cache checks for an earlier
cached prefix ("up to approximately 20 blocks": the prompt-caching guide)."""

# How long a cached prefix lives after its last write or read, in seconds, per provider.
# Anthropic, https://docs.claude.com/en/docs/build-with-claude/prompt-caching (read
# 2026-12-06): "The cache has a minimum 5-minute lifetime ... refreshed for no additional cost
# each time the cached content is used"; `ttl: "1h"` buys a 1-hour lifetime (writes at 2×).
ANTHROPIC_LIFETIME = {"5m": 300.0, "1h": 3600.0}
# OpenAI, https://developers.openai.com/api/docs/guides/prompt-caching (read 2026-12-06):
# in-memory retention "typically clears caches within 5 to 10 minutes of inactivity and always
# removes them within one hour". A bill-payer plans with the 5 minutes: a read after a longer
# pause is luck the guide does not promise, and a plan that counts on it under-budgets.
OPENAI_LIFETIME = 300.0
# Extended retention (`prompt_cache_retention="24h"`: the only one from GPT-5.5 on, the default
# of the earlier models that offer it for an organisation without zero data retention) keeps
# prefixes "active for longer, up to a maximum of 24 hours", with no shorter bound. ctxlab
# plans with one hour: beyond the in-memory 5-10 minutes it is documented to outlast, and far
# short of a maximum it does not promise (`infer_lifetime` reads a recording's own).
OPENAI_EXTENDED_LIFETIME = 3600.0
# Google, https://ai.google.dev/gemini-api/docs/caching (read 2026-12-06): implicit caching
# gives no lifetime ("send requests with similar prefix in a short amount of time"); Vertex AI's
# context-cache overview says implicit entries expire "within 24 hours" and "most entries are
# removed sooner". With no figure to plan with, ctxlab takes 5 minutes, the shortest lifetime
# the other automatic cache documents (OpenAI's), so a pause longer than that is not counted a
# read; a recording's own gaps (`infer_lifetime`) are the better figure.
GOOGLE_LIFETIME = 300.0


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
    lifetime: float | None = None
    """Seconds an entry written with `ttl` lives after its last write or read (each read
    refreshes it, at no cost); None: forever. Only requests with a time (`RequestShape.at`)
    let an entry expire. The provider's documented value in the constructors below."""

    @classmethod
    def anthropic(cls, min_tokens: int = 1024, ttl: Literal["5m", "1h"] = "5m") -> CacheRules:
        """Anthropic's explicit breakpoints (the model's minimum: `min_cached_tokens`), each
        looking back `ANTHROPIC_LOOKBACK` blocks for a cached prefix."""
        if not (isinstance(ttl, str) and ttl in ANTHROPIC_LIFETIME):
            msg = f"ttl must be '5m' or '1h' (Anthropic's two cache lifetimes), got {shown(ttl)}"
            raise UsageError(msg)
        return cls(
            "anthropic", min_tokens, ttl, 1, ANTHROPIC_LOOKBACK, False, ANTHROPIC_LIFETIME[ttl]
        )

    @classmethod
    def openai(cls, *, bills_writes: bool = False, extended: bool = False) -> CacheRules:
        """OpenAI's automatic prefix cache: from 1,024 tokens, in 128-token steps; writes billed
        from the GPT-5.6 family (``bills_writes``); entries kept 5 minutes of inactivity, or an
        hour with extended (24h) retention (``extended``)."""
        lifetime = OPENAI_EXTENDED_LIFETIME if extended else OPENAI_LIFETIME
        return cls("openai", 1024, "5m", 128, None, bills_writes, lifetime)

    @classmethod
    def google(cls, min_tokens: int = 1024) -> CacheRules:
        """Gemini's implicit cache: automatic from the model's minimum, no write or storage
        charge."""
        return cls("google", min_tokens, lifetime=GOOGLE_LIFETIME)

    @classmethod
    def none(cls) -> CacheRules:
        """No cache: every input token at the input price."""
        return cls("none", 0)

    def lifetime_of(self, ttl: Literal["5m", "1h"] | None) -> float | None:
        """Seconds an entry written with ``ttl`` lives (`RequestShape.write_ttl`; None: this
        rules' own `ttl`, its `lifetime`): Anthropic's other TTL has its documented lifetime."""
        if ttl is None or ttl == self.ttl or self.kind != "anthropic":
            return self.lifetime
        return ANTHROPIC_LIFETIME[ttl]

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
        return CacheRules.openai(
            bills_writes=writes, extended=openai_extended(known.model or model)
        )
    if provider == "google":
        return CacheRules.google(minimum)
    return CacheRules.none()


# The models whose default retention is extended (24h) for an organisation without zero data
# retention (the prompt-caching guide, read 2026-12-06); from GPT-5.5 on it is the only one.
_OPENAI_EXTENDED = frozenset(
    {
        "gpt-4.1",
        "gpt-5",
        "gpt-5-codex",
        "gpt-5.1",
        "gpt-5.1-chat-latest",
        "gpt-5.1-codex",
        "gpt-5.1-codex-max",
        "gpt-5.1-codex-mini",
        "gpt-5.2",
        "gpt-5.3-codex",
        "gpt-5.4",
    }
)
_GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?")


def openai_extended(model: str) -> bool:
    """Whether ``model`` (an OpenAI model) keeps its cache with extended retention by default:
    the models the guide lists, and every one from GPT-5.5 on."""
    name = model_key(model)
    if name in _OPENAI_EXTENDED:
        return True
    version = _GPT_VERSION.match(name)
    if version is None:
        return False
    return (int(version[1]), int(version[2] or 0)) >= (5, 5)


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
