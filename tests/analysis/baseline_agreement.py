"""The what-if's feasible baseline beside the outsider's (`tests.analysis.outsider_baseline`):
per session and window, the request count, ``over_limit``, the input tokens and the cost of
each, and how far apart they are. The outsider gets only inputs from ctxlab: the what-if's
token counts, its unrecorded part's sizes, and the price and cache parameters as numbers."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

from ctxlab import ContextConfig, Transcript, WhatIf
from ctxlab.analysis._cost import CacheRules, Price
from tests.analysis.outsider_baseline import (
    Baseline,
    Caching,
    Part,
    Tariff,
    fixed_part,
    input_limit,
    outsider_baseline,
)


@dataclass(frozen=True)
class Figures:
    """A baseline's figures over one session."""

    requests: int
    over_limit: int
    input_tokens: int
    cost: float


@dataclass(frozen=True)
class Agreement:
    """ctxlab's baseline and the outsider's, on one session at one window."""

    ctxlab: Figures
    outsider: Figures

    def gap(self, name: str) -> float:
        """The relative gap of one figure (0 when both are 0; NaN when unpriced)."""
        ours, theirs = getattr(self.ctxlab, name), getattr(self.outsider, name)
        if math.isnan(ours) or math.isnan(theirs):
            return math.nan
        if ours == theirs:
            return 0.0
        return abs(ours - theirs) / max(abs(ours), abs(theirs))

    @property
    def worst(self) -> float:
        """The largest gap of the four figures (the cost left out when unpriced)."""
        gaps = [self.gap(n) for n in ("requests", "over_limit", "input_tokens", "cost")]
        return max(g for g in gaps if not math.isnan(g))


def tariff(price: Price) -> Tariff:
    """A ctxlab price as plain numbers."""

    def plain(p: Price) -> Tariff:
        return Tariff(p.input, p.output, p.cache_write, p.cache_read, write_1h=p.cache_write_1h)

    tier = price.long_context
    own = plain(price)
    if tier is None:
        return own
    return dataclasses.replace(own, above=tier.above, tier=plain(tier.price))


def caching(rules: CacheRules, write_ttl: Literal["5m", "1h"] | None = None) -> Caching:
    """A provider's cache parameters as plain values, and the TTL the requests write at."""
    return Caching(
        rules.kind,
        rules.min_tokens,
        rules.bills_writes,
        rules.lifetime,
        rules.ttl,
        write_ttl,
    )


def outsiders(
    what: WhatIf,
    drop: Literal["oldest", "newest"] = "oldest",
    write_ttl: Literal["5m", "1h"] | None = None,
) -> Baseline:
    """The outsider's baseline of a what-if's session, from the what-if's inputs: its counts,
    unrecorded part, price, rules (with the cache's lifetime), the recording's trusted times
    (`WhatIf.clock`) and ``write_ttl``, the TTL the recording wrote at (`WhatIf.lifetime`)."""
    transcript = what.transcript
    rendered = [tool.rendered for tool in transcript.tools]
    part = what.unrecorded
    known: dict[str, tuple[Part, ...]] = {}

    def fixed(reply: int) -> tuple[Part, ...]:
        unseen = part.at(reply) if part is not None else None
        # One model's unrecorded part is one part; another model's is another, whatever its size.
        key = f"unrecorded:{unseen.key}" if unseen is not None else ""
        if key not in known:
            size = unseen.tokens if unseen is not None else 0
            found = fixed_part(transcript.system, rendered, what.cache, size)
            known[key] = tuple(Part(key, p.tokens) if p.key == "unrecorded" else p for p in found)
        return known[key]

    return outsider_baseline(
        transcript.messages,
        what.cache,
        fixed,
        input_limit(what.context_window),
        tariff(what.price),
        caching(what.rules, write_ttl),
        drop,
        what.clock.times,
    )


def agreement(
    transcript: Transcript,
    window: int,
    drop: Literal["oldest", "newest"] = "oldest",
    *,
    price: Price | None = None,
    rules: CacheRules | None = None,
) -> Agreement:
    """ctxlab's feasible baseline (`WhatIf.references`, `WhatIf.baseline`) and the outsider's
    on ``transcript`` at ``window`` under the default config, at the recording's price and
    rules unless given (no replay is needed: the baseline depends on the session, the window
    and the config's input limit alone)."""
    what = WhatIf(
        transcript, {"default": ContextConfig()}, context_window=window, price=price, rules=rules
    )
    row = what.references().iloc[0]
    costs = what.baseline
    ours = Figures(
        int(row["requests"]),
        int(row["over_limit"]),
        sum(c.input_tokens for c in costs),
        float(row["cost"]),
    )
    # The recording's write TTL, which the what-if's requests write at unless rules are given.
    found = outsiders(what, drop, what.lifetime.ttl if rules is None else None)
    theirs = Figures(len(found.requests), found.over_limit, found.input_tokens, found.cost)
    return Agreement(ours, theirs)
