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

Simplifications, said once: every earlier request is assumed within the cache's TTL (a replay
has no clock), the look-back is taken as exactly 20 blocks (a message counts its content blocks;
tool schemas and System parts one each), the automatic caches are assumed to hit whenever a
prefix was sent before (Google's and OpenAI's pages promise no hit), and a request's tokens are
ctxlab's estimates. Prices are USD per million tokens from the providers' public pricing pages
(``PRICES`` in `ctxlab.analysis._price_table`, each with its source; pass your own `Price`).
docs/concepts/cost.md says it at length.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

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
    expired (its lifetime passed), not because the prefix changed."""
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


@dataclass
class _Cache:
    entries: dict[bytes, int] = field(default_factory=dict)  # prefix digest -> its tokens
    last_keys: Sequence[str] = ()  # the last request written out, and its prefixes' digests
    last_digests: list[bytes] = field(default_factory=list)


def _digests(keys: Sequence[str], out: list[bytes]) -> None:
    """Append to ``out`` (the digests of a shorter prefix of ``keys``) those of the longer ones.

    A chain: each prefix's digest hashes the one before it and its last key, so a prefix has
    one digest however it was reached, and nothing but the cache's entries is kept (a table of
    every prefix seen would grow with the square of the requests when early parts change)."""
    previous = out[-1] if out else b""
    for key in itertools.islice(keys, len(out), None):
        previous = hashlib.blake2b(previous + key.encode(), digest_size=16).digest()
        out.append(previous)


def _prefix_sums(
    shape: RequestShape, shared: dict[int, tuple[list[bytes], list[int]]], cache: _Cache
) -> tuple[Sequence[bytes], Sequence[int]]:
    """Prefix digests and cumulative tokens of a request; computed once per shared base for
    `Prefix` shapes (each request extends the one before), else for the request alone."""
    keys, tokens = shape.keys, shape.tokens
    if isinstance(keys, Prefix) and isinstance(tokens, Prefix):
        digests, cumulative = shared.setdefault(id(keys.base), ([], []))
        if len(digests) < len(keys):
            _digests(Prefix(keys.base, len(keys)), digests)
            total = cumulative[-1] if cumulative else 0
            for count in itertools.islice(tokens.base, len(cumulative), len(keys)):
                total += count
                cumulative.append(total)
        return Prefix(digests, len(keys)), Prefix(cumulative, len(keys))
    # Most requests start as the one before did: its digests up to where the keys part are
    # this request's too (a digest depends on the keys alone), so only the rest is hashed.
    own = cache.last_digests[: _common_length(keys, cache.last_keys)]
    _digests(keys, own)
    cache.last_keys, cache.last_digests = keys, own
    return own, list(itertools.accumulate(tokens))


def _common_length(keys: Sequence[str], other: Sequence[str]) -> int:
    """How many leading keys ``keys`` and ``other`` share: slices compared in C (identity
    first), halving the range — a request's keys are hundreds, and every request is priced."""
    low, high = 0, min(len(keys), len(other))
    if tuple(keys[:high]) == tuple(other[:high]):
        return high
    while high - low > 1:  # keys[:low] are shared, keys[:high] are not
        middle = (low + high) // 2
        if tuple(keys[:middle]) == tuple(other[:middle]):
            low = middle
        else:
            high = middle
    return low


def request_costs(
    shapes: Iterable[RequestShape], price: Price, rules: CacheRules | None = None
) -> list[RequestCost]:
    """The cost of each request in order, each reading what the earlier ones cached; a request
    past ``price``'s long-context size at that tier's prices; NaN throughout for an unpriced
    model (`Price.unknown`)."""
    rules = rules or CacheRules.anthropic()
    cache = _Cache()
    costs: list[RequestCost] = []
    shared: dict[int, tuple[list[bytes], list[int]]] = {}
    for shape in shapes:
        prefixes, cumulative = _prefix_sums(shape, shared, cache)
        total = cumulative[-1] if len(cumulative) else 0
        read = write = 0
        if rules.kind == "anthropic":
            read, write = _anthropic_cache(cache, prefixes, cumulative, shape, rules)
        elif rules.kind in ("openai", "google"):
            read = _openai_cache(cache, prefixes, cumulative, rules)
            if rules.bills_writes and total >= rules.min_tokens:
                # The implicit breakpoint at the request's end: what it did not read, it writes.
                write = total - read
        uncached = total - read - write
        cost = _dollars(price.at(total), rules, uncached, write, read, shape.output_tokens)
        costs.append(RequestCost(uncached, write, read, shape.output_tokens, cost, shape.purpose))
    return costs


def _dollars(
    price: Price, rules: CacheRules, uncached: int, write: int, read: int, output: int
) -> float:
    """USD of one request's tokens at ``price`` (NaN for an unpriced model)."""
    write_price = price.cache_write
    if rules.ttl == "1h" and price.cache_write_1h is not None:
        write_price = price.cache_write_1h
    return (
        uncached * price.input
        + write * write_price
        + read * price.cache_read
        + output * price.output
    ) / 1_000_000


def _longest_cached(cache: _Cache, prefixes: Sequence[bytes], cumulative: Sequence[int]) -> int:
    """Tokens of the longest prefix of this request that an earlier one cached (0: none)."""
    for index in range(len(prefixes) - 1, -1, -1):
        if prefixes[index] in cache.entries:
            return cumulative[index]
    return 0


def _looked_back(
    cache: _Cache,
    prefixes: Sequence[bytes],
    cumulative: Sequence[int],
    shape: RequestShape,
    lookback: int,
) -> int:
    """Tokens of the longest cached prefix that ends within ``lookback`` content blocks before
    one of the request's breakpoints (0: none): the only places the provider looks."""
    blocks = shape.blocks
    read = 0
    for point in shape.breakpoints:
        if point < 0 or point >= len(prefixes):
            continue
        distance, index = 0, point
        while index >= 0 and distance <= lookback:
            if prefixes[index] in cache.entries:
                read = max(read, cumulative[index])
                break  # the longest this breakpoint finds: what lies further back is shorter
            # Moving the boundary before part ``index`` passes its blocks.
            distance += blocks[index] if blocks is not None else 1
            index -= 1
    return read


def _anthropic_cache(
    cache: _Cache,
    prefixes: Sequence[bytes],
    cumulative: Sequence[int],
    shape: RequestShape,
    rules: CacheRules,
) -> tuple[int, int]:
    if rules.lookback is None:
        read = _longest_cached(cache, prefixes, cumulative)
    else:
        read = _looked_back(cache, prefixes, cumulative, shape, rules.lookback)
    written_to = read
    for point in shape.breakpoints:
        if point < 0 or point >= len(prefixes) or cumulative[point] < rules.min_tokens:
            continue
        cache.entries[prefixes[point]] = cumulative[point]
        written_to = max(written_to, cumulative[point])
    return read, written_to - read


def _openai_cache(
    cache: _Cache, prefixes: Sequence[bytes], cumulative: Sequence[int], rules: CacheRules
) -> int:
    read = _longest_cached(cache, prefixes, cumulative)
    # Every prefix of a request is cached with it, so the first prefix (from the end) already
    # there has all of its own: the rest need not be written again.
    for index in range(len(prefixes) - 1, -1, -1):
        if prefixes[index] in cache.entries:
            break
        cache.entries[prefixes[index]] = cumulative[index]
    if read < rules.min_tokens:
        return 0
    return read - read % rules.step


def costs_of_manifests(
    manifests: Sequence[ContextManifest],
    price: Price | None = None,
    rules: CacheRules | None = None,
) -> list[RequestCost]:
    """The cost of a live session's requests (reasoning and summary calls, in the order they
    were sent), one per manifest: outputs from the provider's usage where known; a summary
    call's output is the summary the next request carries. A manifest whose validation failed
    was never sent: it costs nothing and caches nothing. The price and cache rules follow the
    first manifest's model unless given (`price_for`, `cache_rules_for`: an unknown model is
    unpriced, its costs NaN)."""
    if not manifests:
        return []
    model = manifests[0].model
    rules = rules or cache_rules_for(model, price)
    price = price or price_for(model)
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
        shapes.append(shape_of(manifest, output))
    return request_costs(shapes, price, rules)
