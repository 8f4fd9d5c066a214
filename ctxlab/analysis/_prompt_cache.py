"""The provider's prompt cache as the cost model keeps it: cached prefixes by digest, each alive
for its lifetime after its last write or read, on the run's clock (`PrefixCache`), and the
lookups each provider makes (`anthropic_lookup`, `automatic_lookup`).

The clock. A request's time (`RequestShape.at`, seconds) moves the cache's own clock by the
gap since the request before it: the later time less the latest earlier one, never negative
(times out of order or equal: a gap of 0), and 0 when either time is unknown (no clock: every
entry lives, as a cache without a clock). An entry is alive while the clock has not passed its
expiry, its last write or read plus its lifetime; an expired entry is not removed (nothing
scans the entries), only no longer found — and remembered, so that a prefix written again
because its entry had expired (`Lookup.expired`) is told apart from one that had changed.

What a read refreshes follows the provider:

- **Anthropic** keeps an entry per breakpoint: a request refreshes the entry it read and writes
  (or refreshes) one at each of its breakpoints, each for its write's time to live.
- **Automatic caches** (OpenAI, Google) cache every prefix of a request, and using a prefix uses
  every shorter one: the last request's prefixes (its *path*) all live from its time. The
  expiry of the earlier path's prefixes that the new request does not share is written down
  when the path moves on — each prefix once per time it leaves the path, so the bookkeeping
  stays linear in the requests' sizes.

Without a clock (no request with a time yet) none of this is kept: the cache is the same, and
as fast, as one without expiry.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ctxlab.util._views import Prefix

__all__ = [
    "Lookup",
    "PrefixCache",
    "anthropic_lookup",
    "automatic_lookup",
    "common_length",
    "digests",
]

_FOREVER = math.inf


class Lookup(NamedTuple):
    """What a request found: the tokens it read, and those it would have read had no entry
    expired (``known``: its prefix was cached before, at any time). A named tuple: one is
    made for every request priced."""

    read: int
    known: int
    end: int = -1
    """The part index the read prefix ends at (-1: none)."""

    @property
    def expired(self) -> int:
        """Tokens not read only because their entry's lifetime had passed."""
        return max(self.known - self.read, 0)


@dataclass
class PrefixCache:
    """Cached prefixes (digest → tokens) with their expiry on the cache's own clock."""

    lifetime: float | None = None
    """Seconds an entry written with the rules' own time to live lives (None: forever)."""
    entries: dict[bytes, int] = field(default_factory=dict)
    expiry: dict[bytes, tuple[float, float]] = field(default_factory=dict)
    """Digest → (when it expires, its lifetime), for entries written or left on the clock."""
    now: float = 0.0
    """The cache's clock: the sum of the gaps between requests with a time."""
    clocked: bool = False
    """Whether any request had a time (before: nothing expires, nothing is kept for it)."""
    last_at: float | None = None
    path: Sequence[bytes] = ()
    """The last request's prefix digests (automatic caches: alive from `path_at`)."""
    path_at: float = 0.0
    last_keys: Sequence[str] = ()  # the last request written out, and its prefixes' digests
    last_digests: list[bytes] = field(default_factory=list)

    def advance(self, at: float | None) -> None:
        """Move the clock to a request sent at ``at`` (see the module's documentation)."""
        if at is None or not math.isfinite(at):
            self.last_at = None  # unknown: this gap and the next are 0
            return
        if not self.clocked:
            self.clocked = True
        elif self.last_at is not None and at > self.last_at:
            self.now += at - self.last_at
        self.last_at = at if self.last_at is None else max(at, self.last_at)

    def alive(self, digest: bytes) -> bool:
        """Whether ``digest`` is cached and its lifetime has not passed."""
        if digest not in self.entries:
            return False
        if not self.clocked:
            return True
        return self._expires(digest) >= self.now

    def _expires(self, digest: bytes) -> float:
        kept = self.expiry.get(digest)
        if kept is not None:
            return kept[0]
        # Written before the clock started (at its 0): it lives its lifetime from then.
        return _FOREVER if self.lifetime is None else self.lifetime

    def put(self, digest: bytes, tokens: int, lifetime: float | None) -> None:
        """Write (or refresh) ``digest`` now, to live ``lifetime`` seconds."""
        self.entries[digest] = tokens
        # Before the clock starts (at its 0) an entry of the rules' lifetime needs no record
        # (`_expires` gives it); one of another (a 1-hour write under 5-minute rules) does.
        if self.clocked or lifetime != self.lifetime:
            life = _FOREVER if lifetime is None else lifetime
            self.expiry[digest] = (self.now + life, life)

    def refresh(self, digest: bytes) -> None:
        """A read of ``digest``: it lives its own lifetime again from now."""
        if self.clocked:
            kept = self.expiry.get(digest)
            life = kept[1] if kept is not None else self.lifetime
            life = _FOREVER if life is None else life
            self.expiry[digest] = (self.now + life, life)


def digests(keys: Sequence[str], out: list[bytes]) -> None:
    """Append to ``out`` (the digests of a shorter prefix of ``keys``) those of the longer ones.

    A chain: each prefix's digest hashes the one before it and its last key, so a prefix has
    one digest however it was reached, and nothing but the cache's entries is kept (a table of
    every prefix seen would grow with the square of the requests when early parts change)."""
    previous = out[-1] if out else b""
    for key in itertools.islice(keys, len(out), None):
        previous = hashlib.blake2b(previous + key.encode(), digest_size=16).digest()
        out.append(previous)


def common_length(keys: Sequence[object], other: Sequence[object]) -> int:
    """How many leading items ``keys`` and ``other`` share: slices compared in C (identity
    first), halving the range — a request's keys are hundreds, and every request is priced."""
    if isinstance(keys, Prefix) and isinstance(other, Prefix) and keys.base is other.base:
        return min(len(keys), len(other))
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


def anthropic_lookup(
    cache: PrefixCache,
    prefixes: Sequence[bytes],
    cumulative: Sequence[int],
    breakpoints: Sequence[int],
    blocks: Sequence[int] | None,
    lookback: int | None,
) -> Lookup:
    """The longest cached prefix a request reads: anywhere (``lookback`` None), else one that
    ends within ``lookback`` content blocks before one of its breakpoints — the only places
    the provider looks; and the longest it would have read had no entry expired."""
    if lookback is None:
        return _longest(cache, prefixes, cumulative, len(prefixes) - 1, None, None)
    read = known = 0
    index = -1
    for point in breakpoints:
        if 0 <= point < len(prefixes):
            found = _longest(cache, prefixes, cumulative, point, blocks, lookback)
            if found.read > read:
                read, index = found.read, found.end
            known = max(known, found.known)
    return Lookup(read, known, index)


def _longest(
    cache: PrefixCache,
    prefixes: Sequence[bytes],
    cumulative: Sequence[int],
    start: int,
    blocks: Sequence[int] | None,
    lookback: int | None,
) -> Lookup:
    """Walking back from part ``start`` (at most ``lookback`` blocks, None: to the start): the
    first alive prefix, and the first one cached at any time."""
    entries = cache.entries
    known = 0
    distance, index = 0, start
    while index >= 0 and (lookback is None or distance <= lookback):
        digest = prefixes[index]
        if digest in entries:
            if not known:
                known = cumulative[index]
            if not cache.clocked or cache.alive(digest):
                # The longest found: what lies further back is shorter.
                return Lookup(cumulative[index], known, index)
        # Moving the boundary before part ``index`` passes its blocks.
        distance += blocks[index] if blocks is not None else 1
        index -= 1
    return Lookup(0, known)


def automatic_lookup(
    cache: PrefixCache, prefixes: Sequence[bytes], cumulative: Sequence[int]
) -> Lookup:
    """An automatic cache's read (OpenAI, Google): the longest alive prefix, every prefix of the
    request cached with it, the request's path alive from now (see the module's docs)."""
    shared = common_length(prefixes, cache.path) if cache.clocked else 0
    path_alive = cache.lifetime is None or cache.path_at + cache.lifetime >= cache.now
    entries = cache.entries
    known = 0
    found = Lookup(0, 0)
    for index in range(len(prefixes) - 1, -1, -1):
        digest = prefixes[index]
        if digest not in entries:
            continue
        if not known:
            known = cumulative[index]
        alive = (path_alive if index < shared else cache.alive(digest)) if cache.clocked else True
        if alive:
            found = Lookup(cumulative[index], known, index)
            break
    else:
        found = Lookup(0, known)
    # Every prefix of a request is cached with it, so the first prefix (from the end) already
    # there has all of its own: the rest need not be written again.
    for index in range(len(prefixes) - 1, found.end, -1):
        entries[prefixes[index]] = cumulative[index]
    if cache.clocked:
        _move_path(cache, prefixes, shared)
    return found


def _move_path(cache: PrefixCache, prefixes: Sequence[bytes], shared: int) -> None:
    """The request's prefixes become the path, alive from now; the old path's prefixes it does
    not share keep the expiry the old path gave them."""
    old, life = cache.path, cache.lifetime
    if life is not None:
        expires = cache.path_at + life
        for digest in itertools.islice(old, shared, None):
            kept = cache.expiry.get(digest)
            if kept is None or kept[0] < expires:
                cache.expiry[digest] = (expires, life)
    cache.path = prefixes if isinstance(prefixes, Prefix) else tuple(prefixes)
    cache.path_at = cache.now
