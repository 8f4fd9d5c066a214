"""Does a compaction pay back? Each compaction of a run priced against the same run without it.

A compaction breaks the cached prefix: the request after it writes its new prefix (summary and
kept tail) instead of reading the old one, and its summary calls cost. The requests after it are
smaller by what it removed, and each saves that many tokens at the cache-read price. It pays back
at the first request where the savings so far reach the cost of the break.

The counterfactual is the compacted run with one change: the tokens the compaction removed,
``R``, are still there. For the first request after the compaction (request ``k``) that is the
request before it again (its cached prefix, ``P`` tokens, read while the cache is alive) plus
everything request ``k`` holds beyond it; for each later request, the same request with ``R``
more tokens, read from the cache while it is alive (written again when it expired). The break
costs its summary calls plus request ``k`` less its counterfactual; each later request saves its
counterfactual less itself, until the next compaction (which would have removed those tokens
anyway) or the end of the session. docs/concepts/cost.md ("Does a compaction pay back?") gives
the arithmetic to recompute every figure by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import RequestCost, _dollars
from ctxlab.analysis._price import Price
from ctxlab.pipeline import pauses

__all__ = ["BreakEven", "CompactionAt", "break_evens", "duration_text", "paid_back_text"]


@dataclass(frozen=True)
class CompactionAt:
    """Where a compaction falls among a run's priced requests: what `break_evens` reads."""

    position: int
    """The index, among the run's costs, of the first reasoning request after it."""
    removed: int | None = None
    """The tokens it took out of that request (ctxlab's: summary and conversation before less
    after). None: the request before's input and answer less this request's input, as the costs
    count them (a recording's own compaction, whose sizes the file does not give)."""
    label: str = "compaction"
    """How it is named: ``automatic summary``, ``recorded auto``..."""


@dataclass(frozen=True)
class BreakEven:
    """One compaction's break and what it saved (USD at the run's price; NaN when unpriced)."""

    request: int
    """The first reasoning request after it (its number: the plot's x)."""
    label: str
    removed: int
    """``R``: tokens it took out of each request after it."""
    rewritten: int
    """Tokens the request after it sent without reading them from the cache (written, or
    uncached) that, without it, would have been read (0 when the cache had expired: everything
    was sent again anyway)."""
    summary_cost: float
    """Its summary calls (0 when summaries are made offline)."""
    rewrite_cost: float
    """The request after it, less the same request without the compaction."""
    saving: float
    """The mean saving of a later request (NaN when none followed)."""
    later: int
    """The requests after the break that count: up to the next compaction or the end."""
    saved: float
    """What those requests saved, together."""
    paid_back_at: int | None
    """The request at which the savings reached the cost (None: they never did)."""
    gap: float | None
    """Seconds between the request before it and the request after (None: no clock)."""
    cold: bool
    """Whether that gap was longer than the cache's lifetime: the cache had expired, so the
    break re-wrote nothing a warm cache held."""
    until: int | None
    """The next compaction's request, where its savings stop counting (None: the end)."""
    lifetime: float | None = None
    """The cache lifetime the gaps were measured against (None: forever)."""

    @property
    def cost(self) -> float:
        """The break: its summary calls and the request after it, against the counterfactual."""
        return self.summary_cost + self.rewrite_cost

    @property
    def paid_back(self) -> bool:
        """Whether the savings reached the cost before the next compaction or the end."""
        return self.paid_back_at is not None

    @property
    def sentence(self) -> str:
        """The break-even in words: what the break cost and where it paid back, or did not."""
        if math.isnan(self.cost):
            return f"{self.label}: unpriced (no price is known), no break-even"
        if self.cold:
            head = (
                f"cost nothing extra: made in a {duration_text(self.gap or 0)} idle gap, longer "
                f"than the cache's {duration_text(self.lifetime or 0)} lifetime (the cache had "
                "expired)"
            )
            if self.summary_cost:
                head += f"; its summary calls cost ${self.summary_cost:,.4f}"
        else:
            head = f"re-wrote {self.rewritten:,} cached tokens: the break cost ${self.cost:,.4f}"
            if self.summary_cost:
                head += (
                    f" (summary calls ${self.summary_cost:,.4f}, the request after "
                    f"${self.rewrite_cost:+,.4f})"
                )
        return f"{head}; {paid_back_text(self)}"


def paid_back_text(even: BreakEven) -> str:
    """Where ``even`` paid back, or that it had not, with what a later request saves."""
    each = f"each later request saves ${even.saving:,.4f}" if even.later else "no request after it"
    if even.paid_back_at is not None:
        after = even.paid_back_at - even.request
        when = "at once" if after == 0 else f"{after} request{'s' * (after != 1)} later"
        return f"paid back at request {even.paid_back_at} ({when}; {each})"
    end = (
        "when the session ended"
        if even.until is None
        else f"by the next compaction (request {even.until})"
    )
    return (
        f"had not paid back {end}: ${max(even.saved, 0):,.4f} of ${even.cost:,.4f} "
        f"recovered ({each})"
    )


def duration_text(seconds: float) -> str:
    """``45-minute``, ``2-hour``, ``30-second``: a gap or a lifetime as the sentences say it."""
    if seconds >= 7200 or (seconds >= 3600 and seconds % 3600 == 0):
        return f"{seconds / 3600:.1f}".removesuffix(".0") + "-hour"
    if seconds >= 120:
        return f"{round(seconds / 60)}-minute"
    return f"{round(seconds)}-second"


def break_evens(
    costs: Sequence[RequestCost],
    compactions: Sequence[CompactionAt],
    price: Price,
    rules: CacheRules,
    at: Sequence[float | None] = (),
    lifetime: float | None = None,
) -> list[BreakEven]:
    """The break-even of each of ``compactions`` among ``costs`` (a run's requests in the order
    they were sent, summary calls included); ``at`` is when each reasoning request was sent, by
    its number (seconds; missing or None: no clock, the cache taken as alive), ``lifetime`` how
    long a cache entry lives after its last read or write (None: forever); the pause before a
    request is the cost model's (`ctxlab.pipeline.pauses`). Compactions with the same first
    request after them are taken as one."""
    numbers = _request_numbers(costs)
    merged = _merged(compactions, costs)
    clock = _Clock(at, lifetime)
    out: list[BreakEven] = []
    for n, compaction in enumerate(merged):
        end = merged[n + 1].position if n + 1 < len(merged) else len(costs)
        out.append(_one(costs, numbers, compaction, end, clock, price, rules))
    return out


class _Clock:
    """The pause before each reasoning request (`pauses`), against the cache's lifetime."""

    def __init__(self, at: Sequence[float | None], lifetime: float | None) -> None:
        self.gaps = pauses(at)
        self.lifetime = lifetime

    def gap(self, request: int) -> float | None:
        """Seconds between the requests before ``request`` and it (None: unknown)."""
        return self.gaps[request] if request < len(self.gaps) else None

    def alive(self, request: int) -> bool:
        """Whether what the requests before ``request`` cached is still there at it."""
        gap = self.gap(request)
        return gap is None or self.lifetime is None or gap <= self.lifetime


def _request_numbers(costs: Sequence[RequestCost]) -> list[int]:
    # Each cost's reasoning-request number (a summary call: the number of the request after it).
    numbers: list[int] = []
    count = 0
    for cost in costs:
        numbers.append(count)
        count += cost.purpose != "summary"
    return numbers


def _merged(
    compactions: Sequence[CompactionAt], costs: Sequence[RequestCost]
) -> list[CompactionAt]:
    # In order, one per first request after (removed summed; derived when any is unknown); a
    # position on a summary call is its reasoning request's, one past the requests is none.
    by_position: dict[int, CompactionAt] = {}
    for given in sorted(compactions, key=lambda c: c.position):
        position = given.position
        while 0 <= position < len(costs) and costs[position].purpose == "summary":
            position += 1
        if not 0 <= position < len(costs):
            continue
        c = CompactionAt(position, given.removed, given.label)
        seen = by_position.get(c.position)
        if seen is None:
            by_position[c.position] = c
            continue
        removed = None if seen.removed is None or c.removed is None else seen.removed + c.removed
        by_position[c.position] = CompactionAt(c.position, removed, f"{seen.label}, {c.label}")
    return list(by_position.values())


def _one(
    costs: Sequence[RequestCost],
    numbers: Sequence[int],
    compaction: CompactionAt,
    end: int,
    clock: _Clock,
    price: Price,
    rules: CacheRules,
) -> BreakEven:
    k = compaction.position
    first = costs[k]
    previous = next((i for i in range(k - 1, -1, -1) if costs[i].purpose != "summary"), None)
    since = 0 if previous is None else previous + 1
    summaries = sum(c.cost for c in costs[since:k] if c.purpose == "summary")
    removed = compaction.removed
    if removed is None:
        before = costs[previous] if previous is not None else None
        removed = before.input_tokens + before.output - first.input_tokens if before else 0
    removed = max(removed, 0)
    request = numbers[k]
    kept = _kept(costs[previous], rules) if previous is not None else 0
    alive = clock.alive(request)
    unbroken = _unbroken(first, removed, kept if alive else 0, price, rules)
    rewrite_cost = first.cost - unbroken.cost
    cost = summaries + rewrite_cost
    savings = [
        _uncompacted(costs[i], removed, clock.alive(numbers[i]), price, rules) - costs[i].cost
        for i in range(k + 1, end)
        if costs[i].purpose != "summary"
    ]
    paid_back_at = request if cost <= 0 else None
    total = 0.0
    for offset, saving in enumerate(savings, start=1):
        total += saving
        if paid_back_at is None and total >= cost:
            paid_back_at = request + offset
    return BreakEven(
        request=request,
        label=compaction.label,
        removed=removed,
        rewritten=max(_unread(first) - _unread(unbroken), 0),
        summary_cost=summaries,
        rewrite_cost=rewrite_cost,
        saving=total / len(savings) if savings else math.nan,
        later=len(savings),
        saved=total,
        paid_back_at=paid_back_at,
        gap=clock.gap(request),
        cold=not alive,
        until=numbers[end] if end < len(costs) else None,
        lifetime=clock.lifetime,
    )


def _unread(cost: RequestCost) -> int:
    # What a request sends without reading it from the cache: written, or uncached.
    return cost.input_tokens - cost.cache_read


def _writes_billed(rules: CacheRules) -> bool:
    return rules.kind == "anthropic" or rules.bills_writes


def _kept(cost: RequestCost, rules: CacheRules) -> int:
    """The tokens of a request its provider's cache holds after it: Anthropic's, what it read or
    wrote up to its breakpoints; an automatic cache's, the whole request (from its minimum)."""
    if rules.kind == "none":
        return 0
    if rules.kind == "anthropic":
        return cost.cache_read + cost.cache_write
    return cost.input_tokens if cost.input_tokens >= rules.min_tokens else 0


def _unbroken(
    first: RequestCost, removed: int, kept: int, price: Price, rules: CacheRules
) -> RequestCost:
    """Request ``first`` without the compaction: ``removed`` tokens more; the ``kept`` prefix
    of the request before it read (0 when the cache expired), the request's own per-request
    part uncached as it was, the rest written (uncached where the provider bills no write)."""
    total = first.input_tokens + removed
    read = min(kept, total)
    uncached = min(first.uncached, total - read)
    write = total - read - uncached
    if not _writes_billed(rules):
        uncached, write = uncached + write, 0
    return _priced(first, uncached, write, read, price, rules)


def _uncompacted(
    cost: RequestCost, removed: int, alive: bool, price: Price, rules: CacheRules
) -> float:
    """What a later request costs with ``removed`` tokens more: read while the cache is alive,
    written again once it expired (uncached with no cache, or where no write is billed)."""
    uncached, write, read = cost.uncached, cost.cache_write, cost.cache_read
    if rules.kind == "none":
        uncached += removed
    elif alive:
        read += removed
    elif _writes_billed(rules):
        write += removed
    else:
        uncached += removed
    return _priced(cost, uncached, write, read, price, rules).cost


def _priced(
    like: RequestCost, uncached: int, write: int, read: int, price: Price, rules: CacheRules
) -> RequestCost:
    # At the tier of its whole input, as the cost model prices a request; its writes with the
    # time to live ``like``'s had (the rules' when it wrote nothing).
    total = uncached + write + read
    hour = rules.kind == "anthropic" and (
        like.cache_write_1h > 0 if like.cache_write else rules.ttl == "1h"
    )
    dollars = _dollars(price.at(total), hour, uncached, write, read, like.output)
    return RequestCost(uncached, write, read, like.output, dollars, like.purpose)
