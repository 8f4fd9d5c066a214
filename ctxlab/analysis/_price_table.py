"""The providers' published prices, USD per million tokens, each with where and when it was read.

Read on 2026-12-06 from the providers' own pages (found with the project's search tools),
cross-checked against pydantic/genai-prices (``prices/providers/*.yml`` at 47df840, 2026-08-21:
facts compared, nothing copied). Where the provider's page could not be read and only price
trackers report a price, the source says so. A model missing here is unpriced (`price_for`), never
priced as another; add a model with `Price` (and `long_context`) or pass your own.

Cache writes and reads follow each provider's rules (`ctxlab.analysis._cost.CacheRules`):

- **Anthropic**: explicit cache, writes 1.25× input (5-minute TTL) or 2× (1 hour), reads 0.1×
  (0.05× for Sonnet 5.5 from 2026-10-07, 0.025× for Fable/Mythos 5.1), as the pricing page lists.
- **OpenAI**: automatic prefix cache; reads at the model's cached-input price; writes free before
  the GPT-5.6 family, 1.25× input from it ("Cache writes have no additional fee on models before
  the GPT-5.6 family. For GPT-5.6 models and later model families, cache writes cost 1.25× the
  uncached input token rate": developers.openai.com/api/docs/guides/prompt-caching).
- **Google**: implicit cache on Gemini 2.5 and later; reads at the cached price; the cached tokens
  are first billed at the input price, and implicit caching bills no storage ("There are no
  storage costs for implicit caching": Vertex AI's context-cache overview).

Long-context tiers: above the size the whole request is billed at the tier's prices, output
included (Anthropic's Sonnet 4/4.5 1M beta and Opus/Sonnet 4.6 until 1M went GA on 2026-03-13;
Gemini Pro above 200k; OpenAI's GPT-5.4 and later above 272k; Claude Haiku 5.5 above 100k).
"""

from __future__ import annotations

from datetime import date

from ctxlab.analysis._price import LongContext, Price

__all__ = ["DATED", "MIN_CACHED", "PRICES"]

_ANTHROPIC = (
    "platform.claude.com/docs/en/about-claude/pricing (model pricing table), read 2026-12-06"
)
_ANTHROPIC_LONG = (
    "platform.claude.com/docs/en/about-claude/pricing#long-context-pricing, read 2026-12-06"
)
_OPENAI = "developers.openai.com/api/docs/pricing, read 2026-12-06"
_OPENAI_LEGACY = (
    "developers.openai.com/api/docs/pricing (earlier models), read 2026-12-06; "
    "as genai-prices (prices_checked 2025-07-04)"
)
_GOOGLE = "ai.google.dev/gemini-api/docs/pricing, read 2026-12-06"


def _anthropic(
    model: str,
    input_price: float,
    output: float,
    *,
    read: float | None = None,
    source: str = _ANTHROPIC,
    long_context: LongContext | None = None,
) -> Price:
    """Anthropic's price: writes 1.25× input (5 minutes) and 2× (1 hour), reads 0.1× unless the
    page lists another."""
    return Price(
        input_price,
        output,
        input_price * 1.25,
        input_price * 0.1 if read is None else read,
        input_price * 2,
        long_context,
        model,
        "anthropic",
        source,
    )


def _doubled(model: str, input_price: float, output: float, above: int = 200_000) -> LongContext:
    """Anthropic's long-context rate: input and cache ×2, output ×1.5."""
    return LongContext(above, _anthropic(model, input_price * 2, output * 1.5))


def _openai(
    model: str,
    input_price: float,
    output: float,
    cached: float | None,
    *,
    writes: bool = False,
    long_context: bool = False,
    source: str = _OPENAI,
) -> Price:
    """OpenAI's price: the cached-input price (the input price where the model caches nothing),
    writes at the input price or, from GPT-5.6 (``writes``), 1.25× it; ``long_context``: above
    272k input tokens input and cache ×2, output ×1.5 (GPT-5.4 and later)."""
    read = input_price if cached is None else cached
    write = input_price * 1.25 if writes else input_price
    tier = None
    if long_context:
        tier = LongContext(
            272_000,
            Price(
                input_price * 2,
                output * 1.5,
                write * 2,
                read * 2,
                None,
                None,
                model,
                "openai",
                source,
            ),
        )
    return Price(input_price, output, write, read, None, tier, model, "openai", source)


def _google(
    model: str,
    input_price: float,
    output: float,
    cached: float | None,
    *,
    long: tuple[float, float, float] | None = None,
    source: str = _GOOGLE,
) -> Price:
    """Google's price: implicit cache reads at ``cached`` (none: the model caches nothing), no
    write charge; ``long``: (input, output, cached) above 200k input tokens."""
    read = input_price if cached is None else cached
    tier = None
    if long is not None:
        long_input, long_output, long_read = long
        tier = LongContext(
            200_000,
            Price(
                long_input, long_output, long_input, long_read, None, None, model, "google", source
            ),
        )
    return Price(input_price, output, input_price, read, None, tier, model, "google", source)


_HAIKU_5_5 = "platform.claude.com/docs/en/models/haiku-5-5/overview, read 2026-12-06"
_SONNET_5_5_CUT = (
    "platform.claude.com/docs/en/models/sonnet-5-5/overview ($0.20 cache read); the cut to $0.10 "
    "from 2026-10-07 as price trackers read the pricing page (kurofune/claudit v1.9.2, "
    "TheKrush/PromptFuel v1.0.23, phuryn/claude-usage v1.5.7), read 2026-12-06"
)

PRICES: dict[str, Price] = {
    # -- Anthropic ------------------------------------------------------------------------------
    "claude-3-haiku": _anthropic("claude-3-haiku", 0.25, 1.25, read=0.03),
    "claude-3-sonnet": _anthropic("claude-3-sonnet", 3.0, 15.0),
    "claude-3-opus": _anthropic("claude-3-opus", 15.0, 75.0),
    "claude-3-5-haiku": _anthropic("claude-3-5-haiku", 0.8, 4.0),
    "claude-3-5-sonnet": _anthropic("claude-3-5-sonnet", 3.0, 15.0),
    "claude-3-7-sonnet": _anthropic("claude-3-7-sonnet", 3.0, 15.0),
    "claude-opus-4": _anthropic("claude-opus-4", 15.0, 75.0),
    "claude-opus-4-0": _anthropic("claude-opus-4-0", 15.0, 75.0),
    "claude-opus-4-1": _anthropic("claude-opus-4-1", 15.0, 75.0),
    # Sonnet 4 and 4.5 past 200k input tokens (the 1M-context beta): ×2 input, ×1.5 output.
    "claude-sonnet-4": _anthropic(
        "claude-sonnet-4", 3.0, 15.0, long_context=_doubled("claude-sonnet-4", 3.0, 15.0)
    ),
    "claude-sonnet-4-0": _anthropic(
        "claude-sonnet-4-0", 3.0, 15.0, long_context=_doubled("claude-sonnet-4-0", 3.0, 15.0)
    ),
    "claude-sonnet-4-5": _anthropic(
        "claude-sonnet-4-5", 3.0, 15.0, long_context=_doubled("claude-sonnet-4-5", 3.0, 15.0)
    ),
    "claude-haiku-4-5": _anthropic("claude-haiku-4-5", 1.0, 5.0),
    "claude-opus-4-5": _anthropic("claude-opus-4-5", 5.0, 25.0),
    # 2026 releases. Opus 4.6 and Sonnet 4.6: flat over the whole 1M window since 2026-03-13
    # (claude.com/blog/1m-context-ga; `DATED` holds the tier before).
    "claude-opus-4-6": _anthropic("claude-opus-4-6", 5.0, 25.0, source=_ANTHROPIC_LONG),
    "claude-sonnet-4-6": _anthropic("claude-sonnet-4-6", 3.0, 15.0, source=_ANTHROPIC_LONG),
    "claude-opus-4-7": _anthropic("claude-opus-4-7", 5.0, 25.0),
    "claude-opus-4-8": _anthropic("claude-opus-4-8", 5.0, 25.0),
    "claude-sonnet-5": _anthropic(
        "claude-sonnet-5",
        2.0,
        10.0,
        source="platform.claude.com/docs/en/models/sonnet-5/overview, read 2026-12-06",
    ),
    "claude-opus-5": _anthropic(
        "claude-opus-5",
        5.0,
        25.0,
        source="platform.claude.com/docs/about-claude/models/whats-new-opus-5, read 2026-12-06",
    ),
    "claude-opus-5-5": _anthropic(
        "claude-opus-5-5",
        4.0,
        20.0,
        read=0.2,
        source="platform.claude.com/docs/en/models/opus-5-5/overview, read 2026-12-06",
    ),
    "claude-sonnet-5-5": _anthropic(
        "claude-sonnet-5-5", 2.0, 10.0, read=0.1, source=_SONNET_5_5_CUT
    ),
    "claude-haiku-5-5": Price(
        0.1,
        0.5,
        0.125,
        0.01,
        0.2,
        LongContext(
            100_000,
            Price(0.5, 2.5, 0.625, 0.05, 1.0, None, "claude-haiku-5-5", "anthropic", _HAIKU_5_5),
        ),
        "claude-haiku-5-5",
        "anthropic",
        _HAIKU_5_5,
    ),
    "claude-fable-5": _anthropic("claude-fable-5", 10.0, 50.0, read=1.0),
    "claude-mythos-5": _anthropic("claude-mythos-5", 10.0, 50.0, read=1.0),
    "claude-fable-5-1": _anthropic("claude-fable-5-1", 10.0, 50.0, read=0.25),
    "claude-mythos-5-1": _anthropic("claude-mythos-5-1", 10.0, 50.0, read=0.25),
    # -- OpenAI ---------------------------------------------------------------------------------
    # Before GPT-4o nothing is cached ("enabled for all recent models, gpt-4o and newer").
    "gpt-3.5-turbo": _openai("gpt-3.5-turbo", 0.5, 1.5, None, source=_OPENAI_LEGACY),
    "gpt-4": _openai("gpt-4", 30.0, 60.0, None, source=_OPENAI_LEGACY),
    "gpt-4-turbo": _openai("gpt-4-turbo", 10.0, 30.0, None, source=_OPENAI_LEGACY),
    "gpt-4o": _openai("gpt-4o", 2.5, 10.0, 1.25, source=_OPENAI_LEGACY),
    "gpt-4o-mini": _openai("gpt-4o-mini", 0.15, 0.6, 0.075, source=_OPENAI_LEGACY),
    "gpt-4.1": _openai("gpt-4.1", 2.0, 8.0, 0.5, source=_OPENAI_LEGACY),
    "gpt-4.1-mini": _openai("gpt-4.1-mini", 0.4, 1.6, 0.1, source=_OPENAI_LEGACY),
    "gpt-4.1-nano": _openai("gpt-4.1-nano", 0.1, 0.4, 0.025, source=_OPENAI_LEGACY),
    "o1": _openai("o1", 15.0, 60.0, 7.5, source=_OPENAI_LEGACY),
    "o1-mini": _openai("o1-mini", 1.1, 4.4, 0.55, source=_OPENAI_LEGACY),
    "o1-preview": _openai("o1-preview", 15.0, 60.0, 7.5, source=_OPENAI_LEGACY),
    "o3": _openai("o3", 2.0, 8.0, 0.5, source=_OPENAI_LEGACY),
    "o3-mini": _openai("o3-mini", 1.1, 4.4, 0.55, source=_OPENAI_LEGACY),
    "o4-mini": _openai("o4-mini", 1.1, 4.4, 0.275, source=_OPENAI_LEGACY),
    "codex-mini-latest": _openai("codex-mini-latest", 1.5, 6.0, 0.375, source=_OPENAI_LEGACY),
    "gpt-5": _openai("gpt-5", 1.25, 10.0, 0.125),
    "gpt-5-codex": _openai("gpt-5-codex", 1.25, 10.0, 0.125),
    "gpt-5-mini": _openai("gpt-5-mini", 0.25, 2.0, 0.025),
    "gpt-5-nano": _openai("gpt-5-nano", 0.05, 0.4, 0.005),
    "gpt-5.1": _openai("gpt-5.1", 1.25, 10.0, 0.125),
    "gpt-5.1-codex": _openai("gpt-5.1-codex", 1.25, 10.0, 0.125),
    "gpt-5.1-codex-max": _openai("gpt-5.1-codex-max", 1.25, 10.0, 0.125),
    "gpt-5.1-codex-mini": _openai("gpt-5.1-codex-mini", 0.25, 2.0, 0.025),
    "gpt-5.2": _openai("gpt-5.2", 1.75, 14.0, 0.175),
    "gpt-5.2-codex": _openai("gpt-5.2-codex", 1.75, 14.0, 0.175),
    "gpt-5.3-codex": _openai("gpt-5.3-codex", 1.75, 14.0, 0.175),
    "gpt-5.4": _openai("gpt-5.4", 2.5, 15.0, 0.25, long_context=True),
    "gpt-5.4-mini": _openai("gpt-5.4-mini", 0.75, 4.5, 0.075),
    "gpt-5.4-nano": _openai("gpt-5.4-nano", 0.2, 1.25, 0.02),
    "gpt-5.5": _openai("gpt-5.5", 5.0, 30.0, 0.5),
    # The GPT-5.6 family bills cache writes (1.25× input); its prices were cut since launch
    # (`DATED`). ``gpt-5.6`` is Sol's alias.
    "gpt-5.6": _openai("gpt-5.6", 4.0, 20.0, 0.4, writes=True, long_context=True),
    "gpt-5.6-sol": _openai("gpt-5.6-sol", 4.0, 20.0, 0.4, writes=True, long_context=True),
    "gpt-5.6-terra": _openai("gpt-5.6-terra", 2.0, 12.0, 0.2, writes=True, long_context=True),
    "gpt-5.6-luna": _openai("gpt-5.6-luna", 0.2, 1.2, 0.02, writes=True, long_context=True),
    "gpt-6-astra": _openai("gpt-6-astra", 10.0, 50.0, 1.0, writes=True, long_context=True),
    "gpt-6-sol": _openai("gpt-6-sol", 2.0, 10.0, 0.2, writes=True, long_context=True),
    "gpt-6-luna": _openai("gpt-6-luna", 0.1, 0.5, 0.01, writes=True, long_context=True),
    "gpt-6.1-sol": _openai("gpt-6.1-sol", 2.0, 10.0, 0.1, writes=True, long_context=True),
    "gpt-6.1-terra": _openai("gpt-6.1-terra", 1.0, 5.0, 0.05, writes=True, long_context=True),
    "gpt-6.2-sol": _openai("gpt-6.2-sol", 2.0, 10.0, 0.1, writes=True, long_context=True),
    # -- Google ---------------------------------------------------------------------------------
    "gemini-2.0-flash": _google("gemini-2.0-flash", 0.1, 0.4, 0.025),
    "gemini-2.0-flash-lite": _google("gemini-2.0-flash-lite", 0.075, 0.3, None),
    "gemini-2.5-pro": _google("gemini-2.5-pro", 1.25, 10.0, 0.125, long=(2.5, 15.0, 0.25)),
    "gemini-2.5-pro-preview": _google(
        "gemini-2.5-pro-preview", 1.25, 10.0, 0.125, long=(2.5, 15.0, 0.25)
    ),
    "gemini-2.5-flash": _google("gemini-2.5-flash", 0.3, 2.5, 0.03),
    "gemini-2.5-flash-preview-09-2025": _google("gemini-2.5-flash-preview-09-2025", 0.3, 2.5, 0.03),
    "gemini-2.5-flash-lite": _google("gemini-2.5-flash-lite", 0.1, 0.4, 0.01),
    "gemini-3-pro-preview": _google("gemini-3-pro-preview", 2.0, 12.0, 0.2, long=(4.0, 18.0, 0.4)),
    "gemini-3.1-pro-preview": _google(
        "gemini-3.1-pro-preview", 2.0, 12.0, 0.2, long=(4.0, 18.0, 0.4)
    ),
    "gemini-3-flash-preview": _google("gemini-3-flash-preview", 0.5, 3.0, 0.05),
    "gemini-3.1-flash-lite": _google("gemini-3.1-flash-lite", 0.25, 1.5, 0.025),
    "gemini-3.1-flash-lite-preview": _google("gemini-3.1-flash-lite-preview", 0.25, 1.5, 0.025),
    "gemini-3.5-flash": _google("gemini-3.5-flash", 1.5, 9.0, 0.15),
    "gemini-3.5-flash-lite": _google("gemini-3.5-flash-lite", 0.3, 2.5, 0.03),
    # Introductory prices through 2026-12-31; `DATED` holds the standard price from 2027.
    "gemini-3.6-flash": _google("gemini-3.6-flash", 0.75, 3.75, 0.075),
    "gemini-3.7-flash": _google("gemini-3.7-flash", 0.75, 3.75, 0.075),
}
"""Prices by model name: the price in force on 2026-12-06 (a recording of another day:
`price_for(model, on=day)` reads `DATED`)."""

_CHANGELOG = "developers.openai.com/api/docs/changelog (as genai-prices, 2026-08-02)"

DATED: dict[str, tuple[tuple[date, Price], ...]] = {
    # (the day a price took effect, the price), oldest first; one of them is PRICES's. A day
    # before the first takes the first (date.min: the release day was not read).
    "claude-opus-4-6": (
        (
            date.min,
            _anthropic(
                "claude-opus-4-6", 5.0, 25.0, long_context=_doubled("claude-opus-4-6", 5.0, 25.0)
            ),
        ),
        (date(2026, 3, 13), PRICES["claude-opus-4-6"]),
    ),
    "claude-sonnet-4-6": (
        (
            date.min,
            _anthropic(
                "claude-sonnet-4-6",
                3.0,
                15.0,
                long_context=_doubled("claude-sonnet-4-6", 3.0, 15.0),
            ),
        ),
        (date(2026, 3, 13), PRICES["claude-sonnet-4-6"]),
    ),
    "claude-sonnet-5-5": (
        (date.min, _anthropic("claude-sonnet-5-5", 2.0, 10.0, source=_SONNET_5_5_CUT)),
        (date(2026, 10, 7), PRICES["claude-sonnet-5-5"]),
    ),
    "o3": (
        (date(2025, 4, 16), _openai("o3", 10.0, 40.0, 2.5, source=_OPENAI_LEGACY)),
        (date(2025, 6, 10), PRICES["o3"]),
    ),
    "gpt-5.6-terra": (
        (
            date(2026, 7, 9),
            _openai(
                "gpt-5.6-terra", 2.5, 15.0, 0.25, writes=True, long_context=True, source=_CHANGELOG
            ),
        ),
        (date(2026, 7, 30), PRICES["gpt-5.6-terra"]),
    ),
    "gpt-5.6-luna": (
        (
            date(2026, 7, 9),
            _openai(
                "gpt-5.6-luna", 1.0, 6.0, 0.1, writes=True, long_context=True, source=_CHANGELOG
            ),
        ),
        (date(2026, 7, 30), PRICES["gpt-5.6-luna"]),
    ),
    "gemini-3.6-flash": (
        (date.min, PRICES["gemini-3.6-flash"]),
        (date(2027, 1, 1), _google("gemini-3.6-flash", 1.5, 7.5, 0.15)),
    ),
    "gemini-3.7-flash": (
        (date.min, PRICES["gemini-3.7-flash"]),
        (date(2027, 1, 1), _google("gemini-3.7-flash", 1.5, 7.5, 0.15)),
    ),
}
"""Each dated change of a price, oldest first: ``(day it took effect, price)``."""

MIN_CACHED: dict[str, int] = {
    # Anthropic's minimum cacheable prompt (the prompt-caching guide, read 2026-12-06; the 2026
    # releases as docs.litellm.ai's prompt-caching page of 2026-10-07 lists them).
    "claude-3-haiku": 2048,
    "claude-3-5-haiku": 2048,
    "claude-haiku-4-5": 4096,
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-7": 2048,
    "claude-opus-5": 512,
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    # Gemini's implicit cache (ai.google.dev/gemini-api/docs/caching, updated 2026-10-13).
    "gemini-2.5-pro": 2048,
    "gemini-2.5-pro-preview": 2048,
    "gemini-2.5-flash": 2048,
    "gemini-3-pro-preview": 4096,
    "gemini-3.1-pro-preview": 4096,
    "gemini-3-flash-preview": 1024,
    "gemini-3.5-flash": 4096,
    "gemini-3.6-flash": 4096,
    "gemini-3.7-flash": 4096,
}
"""The shortest prefix a model caches, where it differs from its provider's 1,024."""
