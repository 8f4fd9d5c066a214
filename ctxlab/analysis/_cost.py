"""What a sequence of requests costs with prompt caching: cache reads and writes per request
from the prefix it shares with earlier ones, following each provider's published rules
(`cache_rules_for` picks them by the model's provider).

- **Anthropic** (``CacheRules.anthropic()``): a request caches the prefix up to each of its
  breakpoints (ctxlab's adapter sends two: after tools + System, and on the latest message); a
  later request reads the longest cached prefix it starts with that ends at most 20 content
  blocks before one of its breakpoints (the prompt-caching guide: "the system automatically
  checks for cache hits at all previous content block boundaries (up to approximately 20
  blocks before your explicit breakpoint)" — an earlier prefix is not found, and the request
  writes everything again); what it writes beyond what it read is billed at 1.25× the input
  price (5-minute TTL; 2× for 1 hour), reads at 0.1×. A prefix shorter than the model's minimum
  cacheable length (1,024 tokens for most models; 4,096 for Opus 4.5/4.6 and Haiku 4.5, 2,048
  for Haiku 3.x: `min_cached_tokens`) is neither written nor read.
- **OpenAI** (``CacheRules.openai()``): automatic from 1,024 tokens, in 128-token steps, reads
  at the model's cached-input price; no write charge before the GPT-5.6 family, 1.25× input
  from it (``bills_writes``: the request's uncached rest is written, OpenAI's implicit
  breakpoint taken at its end).
- **Google** (``CacheRules.google()``): Gemini's implicit cache, automatic from the model's
  minimum (2,048 or 4,096 tokens), reads at the cached price, no write charge and — implicit
  caching — no storage charge.
- ``CacheRules.none()``: every input token at the input price (a model whose provider is not
  known: its cost is unpriced anyway).

A request whose input passes its price's long-context size is billed at that tier for all of
its tokens (`Price.at`). An unpriced model (`Price.unknown`) costs NaN: a sum over its requests
is NaN, never $0.

The clock: a request with a time (`RequestShape.at`) reads only entries still alive then — an
entry lives its provider's lifetime (`CacheRules.lifetime`: Anthropic 5 minutes, or an hour for
1-hour writes, `RequestShape.write_ttl`; OpenAI and Google as their pages say, with the source in
`ctxlab.analysis._cache_rules`) after its last write or read, each read refreshing it at no cost.
A prefix whose entry expired is written again and billed as a write; `RequestCost.expired`
counts those tokens apart from what a changed prefix writes. Gaps are measured between requests
with times, never negative; without times nothing expires (`ctxlab.analysis._prompt_cache`).

Simplifications, said once: a request without a time is taken as sent right after the one
before it (no clock: every entry alive, as a cache that never expires); a recording's times are
when its replies were recorded, so a gap counts the next reply's generation too; the look-back
is taken as exactly 20 blocks (a message counts its content blocks; tool schemas and System
parts one each); the automatic caches are assumed to hit whenever a live prefix was sent before
(Google's and OpenAI's pages promise no hit, and plan lifetimes they give as ranges), and a
request's tokens are ctxlab's estimates. Prices are USD per million tokens from the providers'
public pricing pages (``PRICES`` in `ctxlab.analysis._price_table`, each with its source; pass
your own `Price`). docs/concepts/cost.md says it at length.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from ctxlab.analysis._cache_clock import manifest_times, recorded_ttl
from ctxlab.analysis._cache_rules import (
    ANTHROPIC_LOOKBACK,
    CacheRules,
    cache_rules_for,
    pricing_note,
)
from ctxlab.analysis._prices import (
    PRICES,
    Price,
    checked_price,
    price_for,
)
from ctxlab.analysis._prompt_cache import (
    PrefixCache,
    anthropic_lookup,
    automatic_lookup,
    common_length,
    digests,
)
from ctxlab.manifest import ContextManifest
from ctxlab.util._views import Prefix

__all__ = [
    "ANTHROPIC_LOOKBACK",
    "PRICES",
    "CacheRules",
    "Prefix",
    "Price",
    "RequestCost",
    "RequestShape",
    "cache_rules_for",
    "checked_price",
    "costs_of_manifests",
    "price_for",
    "pricing_note",
    "request_costs",
    "rewrite_dollars",
    "shape_of",
]


@dataclass(frozen=True)
class RequestShape:
    """A request as the cost model sees it: its parts in provider order (a key that changes
    when the part's content does, and its tokens), where the cache breakpoints sit (indexes of
    the parts they follow) and the tokens of its answer."""

    keys: Sequence[str]
    tokens: Sequence[int]
    breakpoints: tuple[int, ...] = ()
    output_tokens: int = 0
    purpose: str = "reasoning"
    fixed: int = 0
    """How many leading parts are tool schemas and System, with the unrecorded part (what every
    request repeats)."""
    blocks: Sequence[int] | None = None
    """The content blocks of each part (None: one each), what a cache look-back counts."""
    at: float | None = None
    """When the request is sent, in seconds on the run's clock (the recording's for a replay,
    the wall clock for a live agent, the run's own for a fork). None: no clock — every earlier
    cached prefix is taken as alive."""
    write_ttl: Literal["5m", "1h"] | None = None
    """The time to live this request's cache writes get (a recording says which); None: the
    `CacheRules`' own."""


@dataclass(frozen=True)
class RequestCost:
    """Input tokens by how they are billed, the output, and the cost in USD."""

    uncached: int
    cache_write: int
    cache_read: int
    output: int
    cost: float
    purpose: str = "reasoning"
    expired: int = 0
    """Of `cache_write`, the tokens written again only because the entry that held them had
    expired (its lifetime passed), not because the prefix changed: what the request would
    have read without the clock. (A cache that bills no write — OpenAI before GPT-5.6,
    Google — processes them again at the input price: they are then part of `uncached`.)"""
    cache_write_1h: int = 0
    """Of `cache_write`, the tokens written with the 1-hour time to live."""

    @property
    def input_tokens(self) -> int:
        """All input tokens, however billed."""
        return self.uncached + self.cache_write + self.cache_read


_FIXED = ("unrecorded", "tools", "system")
_FIXED_ORDER = {placement: n for n, placement in enumerate(_FIXED)}.__getitem__
_PER_REQUEST = ("transient", "references")
_placement = operator.attrgetter("placement")
_tokens = operator.attrgetter("tokens")


def shape_of(
    manifest: ContextManifest, output_tokens: int = 0, keys: dict[int, str] | None = None
) -> RequestShape:
    """The shape of a prepared request as the provider bills it (its `billed_items`: after the
    provider's own edits): tools and System first (the provider's order; what a recording does
    not hold of them, the ``unrecorded`` part, before them: the same cached prefix), then
    summary, conversation and material; breakpoints as ctxlab's Anthropic adapter sends them
    (after tools + System, and after the conversation, before per-request material).

    ``keys`` memoizes each item's key by the item's identity (the manifests of one run share
    their unchanged items): pass one dict for the manifests of one run, alive while they are."""
    items = manifest.billed_items
    placements = list(map(_placement, items))
    lead = 0
    while lead < len(placements) and placements[lead] in _FIXED:
        lead += 1
    if sum(map(placements.count, _FIXED)) == lead:
        # As the layout writes them, tools and System lead: what follows is taken as it is
        # (C-level copies: a request's items are hundreds, and every request is shaped).
        fixed = sorted(items[:lead], key=lambda i: _FIXED_ORDER(i.placement))
        ordered = [*fixed, *items[lead:]]
        last = len(placements) - 1
        while last >= lead and placements[last] in _PER_REQUEST:
            last -= 1
    else:
        fixed = [i for i in items if i.placement in _FIXED]
        fixed.sort(key=lambda i: _FIXED_ORDER(i.placement))
        ordered = [*fixed, *(i for i in items if i.placement not in _FIXED)]
        stable = [n for n, i in enumerate(ordered) if i.placement not in _PER_REQUEST]
        last = stable[-1] if stable else -1
    # The second breakpoint ends the part the next request shares: before per-request material.
    breakpoints = tuple(sorted({len(fixed) - 1, last} - {-1}))
    if keys is None:
        part_keys = tuple(f"{i.id}#{i.content_hash}" for i in ordered)
    else:
        ids = list(map(id, ordered))
        known: list[str | None] = list(map(keys.get, ids))
        if None in known:
            for n, key in enumerate(known):
                if key is None:
                    item = ordered[n]
                    known[n] = keys.setdefault(ids[n], f"{item.id}#{item.content_hash}")
        part_keys = cast("tuple[str, ...]", tuple(known))  # every None was filled above
    return RequestShape(
        part_keys,
        tuple(map(_tokens, ordered)),
        breakpoints,
        output_tokens,
        manifest.purpose,
        len(fixed),
        tuple(item.blocks for item in ordered),
    )


def _prefix_sums(
    shape: RequestShape, shared: dict[int, tuple[list[bytes], list[int]]], cache: PrefixCache
) -> tuple[Sequence[bytes], Sequence[int]]:
    """Prefix digests and cumulative tokens of a request; computed once per shared base for
    `Prefix` shapes (each request extends the one before), else for the request alone."""
    keys, tokens = shape.keys, shape.tokens
    if isinstance(keys, Prefix) and isinstance(tokens, Prefix):
        chain, cumulative = shared.setdefault(id(keys.base), ([], []))
        if len(chain) < len(keys):
            digests(Prefix(keys.base, len(keys)), chain)
            total = cumulative[-1] if cumulative else 0
            for count in itertools.islice(tokens.base, len(cumulative), len(keys)):
                total += count
                cumulative.append(total)
        return Prefix(chain, len(keys)), Prefix(cumulative, len(keys))
    # Most requests start as the one before did: its digests up to where the keys part are
    # this request's too (a digest depends on the keys alone), so only the rest is hashed.
    own = cache.last_digests[: common_length(keys, cache.last_keys)]
    digests(keys, own)
    cache.last_keys, cache.last_digests = keys, own
    return own, list(itertools.accumulate(tokens))


def request_costs(
    shapes: Iterable[RequestShape], price: Price, rules: CacheRules | None = None
) -> list[RequestCost]:
    """The cost of each request in order, each reading what the earlier ones cached and is
    still alive at its time (`RequestShape.at`: without times, every entry lives); a request
    past ``price``'s long-context size at that tier's prices; NaN throughout for an unpriced
    model (`Price.unknown`). ``expired`` says how much of each request was written again only
    because its entry's lifetime had passed."""
    rules = rules or CacheRules.anthropic()
    cache = PrefixCache(rules.lifetime)
    costs: list[RequestCost] = []
    shared: dict[int, tuple[list[bytes], list[int]]] = {}
    for shape in shapes:
        cache.advance(shape.at)
        prefixes, cumulative = _prefix_sums(shape, shared, cache)
        total = cumulative[-1] if len(cumulative) else 0
        read = write = expired = 0
        if rules.kind == "anthropic":
            read, write, expired = _anthropic_cache(cache, prefixes, cumulative, shape, rules)
        elif rules.kind in ("openai", "google"):
            found = automatic_lookup(cache, prefixes, cumulative)
            read, known = _stepped(found.read, rules), _stepped(found.known, rules)
            expired = known - read
            if rules.bills_writes and total >= rules.min_tokens:
                # The implicit breakpoint at the request's end: what it did not read, it writes.
                write = total - read
        uncached = total - read - write
        hour = _hour_writes(shape, rules)
        cost = _dollars(price.at(total), hour, uncached, write, read, shape.output_tokens)
        costs.append(
            RequestCost(
                uncached,
                write,
                read,
                shape.output_tokens,
                cost,
                shape.purpose,
                expired,
                write if hour else 0,
            )
        )
    return costs


def _hour_writes(shape: RequestShape, rules: CacheRules) -> bool:
    """Whether the request writes with Anthropic's 1-hour time to live (its own, or the
    rules')."""
    return rules.kind == "anthropic" and (shape.write_ttl or rules.ttl) == "1h"


def _stepped(tokens: int, rules: CacheRules) -> int:
    """A read as an automatic cache bills it: nothing under its minimum, whole steps."""
    if tokens < rules.min_tokens:
        return 0
    return tokens - tokens % rules.step


def _dollars(price: Price, hour: bool, uncached: int, write: int, read: int, output: int) -> float:
    """USD of one request's tokens at ``price`` (NaN for an unpriced model); ``hour``: its
    writes at the 1-hour price."""
    write_price = price.cache_write
    if hour and price.cache_write_1h is not None:
        write_price = price.cache_write_1h
    return (
        uncached * price.input
        + write * write_price
        + read * price.cache_read
        + output * price.output
    ) / 1_000_000


def rewrite_dollars(cost: RequestCost, tokens: int, price: Price) -> float:
    """USD ``tokens`` of a request (``cost``) cost as a write above reading them from the
    cache: its write price (1-hour where it wrote at that TTL; the input price where its cache
    bills no write) less the read price, at the request's tier."""
    if not tokens:
        return 0.0
    tier = price.at(cost.input_tokens)
    written = tier.input
    if cost.cache_write:
        written = tier.cache_write
        if cost.cache_write_1h and tier.cache_write_1h is not None:
            written = tier.cache_write_1h
    return tokens * (written - tier.cache_read) / 1_000_000


def _anthropic_cache(
    cache: PrefixCache,
    prefixes: Sequence[bytes],
    cumulative: Sequence[int],
    shape: RequestShape,
    rules: CacheRules,
) -> tuple[int, int, int]:
    """Read, written and written-again-because-expired tokens of one request: it reads the
    longest alive prefix it finds (and refreshes it), and writes one at each breakpoint."""
    found = anthropic_lookup(
        cache, prefixes, cumulative, shape.breakpoints, shape.blocks, rules.lookback
    )
    if found.end >= 0:
        cache.refresh(prefixes[found.end])
    lifetime = rules.lifetime_of(shape.write_ttl)
    read = written_to = found.read
    for point in shape.breakpoints:
        if point < 0 or point >= len(prefixes) or cumulative[point] < rules.min_tokens:
            continue
        cache.put(prefixes[point], cumulative[point], lifetime)
        written_to = max(written_to, cumulative[point])
    write = written_to - read
    # What it would have read had nothing expired, it writes again: at most what it writes.
    return read, write, min(found.expired, write)


def costs_of_manifests(
    manifests: Sequence[ContextManifest],
    price: Price | None = None,
    rules: CacheRules | None = None,
    *,
    times: Mapping[str, float] | None = None,
    joined: int | None = None,
) -> list[RequestCost]:
    """The cost of a live session's requests (reasoning and summary calls, in the order they
    were sent), one per manifest: outputs from the provider's usage where known; a summary
    call's output is the summary the next request carries. A manifest whose validation failed
    was never sent: it costs nothing and caches nothing. The price and cache rules follow the
    first manifest's model unless given (`price_for`, `cache_rules_for`: an unknown model is
    unpriced, its costs NaN).

    Writes are at Anthropic's 1-hour TTL where the manifests' usage says most were
    (`recorded_ttl`). The cache's clock is each manifest's ``sent_at`` (the wall clock the agent sent it at),
    else its time in ``times`` (by request id: a recording's, `ReplaySession`); a time after
    now is distrusted (no clock for its gaps). ``joined``: the position from which the
    manifests are another run's continuing the ones before (a fork's after its fork point):
    their clock is moved so that the first follows the last before it with no gap, their own
    gaps kept."""
    if not manifests:
        return []
    model = manifests[0].model
    rules = rules or cache_rules_for(model, price)
    price = price or price_for(model)
    clock = manifest_times(manifests, times or {}, joined)
    # Where the provider's usage says the writes had Anthropic's 1-hour TTL, they had it.
    bills = {n: m.provider_usage for n, m in enumerate(manifests) if m.provider_usage}
    ttl = recorded_ttl(bills) if rules.kind == "anthropic" else None
    shapes: list[RequestShape] = []
    for index, manifest in enumerate(manifests):
        if manifest.validation != "passed":
            shapes.append(RequestShape((), (), purpose=manifest.purpose))
            continue
        usage = manifest.provider_usage
        output = usage.output_tokens if usage is not None else 0
        if manifest.purpose == "summary" and usage is None:
            following = next((m for m in manifests[index + 1 :] if m.purpose != "summary"), None)
            output = following.totals.get("summary", 0) if following is not None else 0
        shape = shape_of(manifest, output)
        if clock[index] is not None or ttl is not None:
            shape = dataclasses.replace(shape, at=clock[index], write_ttl=ttl)
        shapes.append(shape)
    return request_costs(shapes, price, rules)
