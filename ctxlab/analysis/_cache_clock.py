"""A recording's clock as the prompt cache reads it: which of its times are trusted
(`RecordingClock`: a time after now, not a number or missing gives no clock for its gaps), the
time to live its usage says its writes had (`recorded_ttl`), and the cache lifetime inferred
from its own usage where it does not say (`infer_lifetime`: the longest gap after which the
prefix was still read, the shortest after which it was written again).

The rules, said once: a reply's time is when the file recorded it (`Transcript.times`), and its
request is taken as sent then; a gap is a time less the latest earlier one, 0 when that is later
or equal (never negative), and no gap at all (0) next to a time that is missing or distrusted.
Without any time there is no clock: every cached prefix is taken as alive, and said so.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.messages import AssistantMessage, ProviderUsage

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript
    from ctxlab.manifest import ContextManifest

__all__ = [
    "LIVE_CLOCK",
    "LifetimeInference",
    "RecordingClock",
    "clock_sentence",
    "clocked_rules",
    "duration",
    "infer_lifetime",
    "manifest_times",
    "recorded_ttl",
    "recording_clock",
    "recording_clock_note",
    "trusted_time",
]

READ_SHARE = 0.5
"""A request after a gap *read* the prefix when it read at least this share of the request
before it (its whole input: the prefix the next request repeats)."""
RESENT_SHARE = 0.9
"""It *wrote the prefix again* when it read less than `READ_SHARE` of it though it still sent
at least this share of it (a compaction that shrank the request tells nothing of time)."""
MIN_PREFIX = 1024
"""A prefix shorter than this is cached by no provider: its gap tells nothing."""


def trusted_time(value: object, now: float) -> float | None:
    """``value`` as a request's time when it can be one: a finite number of seconds not after
    ``now`` (a recorded time in the future is distrusted); else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value > now:
        return None
    return float(value)


def duration(seconds: float) -> str:
    """``seconds`` in words a reader takes in at once: ``45 s``, ``5 min``, ``4 h 2 min``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


@dataclass(frozen=True)
class RecordingClock:
    """A recording's times as the cost model takes them."""

    times: dict[int, float]
    """The trusted times, by the index of the reply (`trusted_time`)."""
    replies: int
    """The recording's replies."""
    future: int = 0
    """Times after now: distrusted, no clock for their gaps."""
    unreadable: int = 0
    """Times that are not a finite number."""
    disordered: int = 0
    """Times earlier than, or equal to, the latest before them: gaps of 0."""
    gaps: tuple[float, ...] = ()
    """The gaps between consecutive timed replies (0 where out of order)."""

    @property
    def timed(self) -> bool:
        """Whether any gap can be measured (two trusted times or more)."""
        return len(self.times) >= 2

    def note(self, lifetime: float | None) -> str:
        """The clock in a sentence, with what it does to a cache of ``lifetime`` seconds: what
        the what-if's pricing note and the Lab's header say."""
        if not self.timed:
            return (
                "cache without a clock: the recording holds no times to measure gaps by, so "
                "every cached prefix is taken as alive (never expired)"
            )
        parts = [f"cache on the recording's clock ({len(self.times):,} of {self.replies:,} "]
        parts[0] += "replies timed)"
        if lifetime is not None:
            longer = [g for g in self.gaps if g > lifetime]
            if longer:
                parts.append(
                    f"{len(longer):,} gap{'s' if len(longer) != 1 else ''} longer than the "
                    f"cache's {duration(lifetime)} lifetime (longest {duration(max(longer))}) "
                    "write the prefix again"
                )
            else:
                parts.append(f"no gap longer than the cache's {duration(lifetime)} lifetime")
        untimed = self.replies - len(self.times)
        if untimed:
            parts.append(
                f"{untimed:,} repl{'ies' if untimed != 1 else 'y'} without a trusted time "
                f"taken as sent right after the one before ({self.future:,} in the future)"
            )
        if self.disordered:
            parts.append(f"{self.disordered:,} out of order or equal (gaps of 0)")
        return "; ".join(parts)


def recording_clock(transcript: Transcript, now: float | None = None) -> RecordingClock:
    """The trusted times of ``transcript`` (``now``: the present, POSIX seconds; the wall
    clock when omitted) and the gaps between them."""
    now = time.time() if now is None else now
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    times: dict[int, float] = {}
    future = unreadable = disordered = 0
    gaps: list[float] = []
    latest: float | None = None
    for index in replies:
        if index not in transcript.times:
            continue
        value = transcript.times[index]
        trusted = trusted_time(value, now)
        if trusted is None:
            readable = isinstance(value, int | float) and math.isfinite(value)
            future += readable
            unreadable += not readable
            latest = None  # no clock for the gaps next to it
            continue
        times[index] = trusted
        if latest is not None:
            disordered += trusted <= latest
            gaps.append(max(trusted - latest, 0.0))
        latest = trusted if latest is None else max(latest, trusted)
    return RecordingClock(times, len(replies), future, unreadable, disordered, tuple(gaps))


LIVE_CLOCK = (
    "cache on the wall clock: each request at the time the agent sent it, an entry gone after "
    "its provider's lifetime"
)
"""The clock of a live agent's costs (its manifests' ``sent_at``), in words."""


def clock_sentence(clock: RecordingClock, rules: CacheRules, inference: LifetimeInference) -> str:
    """What the cache of a recording runs on, in words: its clock (or none) with the gaps past
    ``rules``' lifetime, and the lifetime its usage shows (`WhatIf.cache_clock`, the Lab)."""
    note = clock.note(rules.lifetime)
    return f"{note}; {inference.sentence}" if clock.timed else note


def recording_clock_note(transcript: Transcript, rules: CacheRules) -> str:
    """`clock_sentence` of ``transcript`` under its provider's ``rules`` (`clocked_rules`)."""
    clock = recording_clock(transcript)
    clocked, inference = clocked_rules(transcript, rules, clock)
    return clock_sentence(clock, clocked, inference)


def recorded_ttl(usage: Mapping[int, ProviderUsage]) -> Literal["1h"] | None:
    """``1h`` when most of a recording's written tokens were Anthropic 1-hour writes
    (``cache_creation_1h_input_tokens``): its replay writes at the 1-hour TTL and keeps
    entries an hour. None otherwise — 5-minute writes, or a recording that does not split
    them (the two look the same), or a split larger than what it splits (not trusted)."""
    written = hour = 0
    for bill in usage.values():
        if bill.cache_creation_1h_input_tokens > bill.cache_creation_input_tokens:
            return None
        written += bill.cache_creation_input_tokens
        hour += bill.cache_creation_1h_input_tokens
    return "1h" if written and hour * 2 > written else None


@dataclass(frozen=True)
class LifetimeInference:
    """The cache lifetime a recording's own usage shows, beside the documented one."""

    documented: float | None
    """The provider's documented lifetime for the recording's writes (None: forever)."""
    longest_read: float | None
    """The longest gap after which the next request still read the prefix (None: no such
    gap)."""
    shortest_rewrite: float | None
    """The shortest gap after which the next request wrote the prefix again (None: none)."""
    reads: int = 0
    rewrites: int = 0
    lifetime: float | None = None
    """The lifetime the cost model uses: the documented one where the gaps agree with it (or
    tell nothing), else the longest gap after which the prefix was read (or, with no such
    gap, a second short of the shortest re-write). Re-writes after a gap shorter than a read,
    or within the documented lifetime (a floor: the provider promises it), are set aside
    (`set_aside`), so the inference never shortens a documented lifetime."""
    ttl: Literal["1h"] | None = None
    """The recording's write TTL when its usage says (`recorded_ttl`)."""
    set_aside: int = 0
    """Re-writes after a gap shorter than a read or than the documented lifetime: a changed
    prefix's, not time's."""

    @property
    def agrees(self) -> bool:
        """Whether the recording's gaps agree with the documented lifetime."""
        life = math.inf if self.documented is None else self.documented
        return (self.longest_read is None or self.longest_read <= life) and (
            self.shortest_rewrite is None or self.shortest_rewrite > life
        )

    @property
    def sentence(self) -> str:
        """The inference in words."""
        said = "1-hour writes, as its usage records" if self.ttl else "its usage"
        known = "no lifetime" if self.documented is None else duration(self.documented)
        seen = []
        if self.longest_read is not None:
            seen.append(f"still read after gaps up to {duration(self.longest_read)}")
        if self.shortest_rewrite is not None:
            seen.append(f"wrote the prefix again after a gap of {duration(self.shortest_rewrite)}")
        if not seen:
            return (
                f"cache lifetime {known} as documented: no gap of this recording tells "
                f"otherwise ({said})"
            )
        evidence = " and ".join(seen)
        if self.set_aside:
            evidence += (
                f" ({self.set_aside} re-write{'s' if self.set_aside != 1 else ''} after gaps "
                "shorter than a read or the documented lifetime set aside: a changed prefix, "
                "not time)"
            )
        if self.agrees:
            return f"cache lifetime {known} as documented; the recording agrees: it {evidence}"
        used = "forever" if self.lifetime is None else duration(self.lifetime)
        return (
            f"cache lifetime {used}, inferred from the recording: it {evidence} (documented: "
            f"{known})"
        )


def infer_lifetime(
    transcript: Transcript, rules: CacheRules, clock: RecordingClock | None = None
) -> LifetimeInference:
    """The cache lifetime ``transcript``'s usage shows under ``rules`` (its provider's): each
    gap between two timed replies with usage is a *read* (the later request read at least
    `READ_SHARE` of the earlier one's input) or a *re-write* (it read less though it sent at
    least `RESENT_SHARE` of it again), else it tells nothing. A recording that reads no cache
    anywhere tells nothing either (its cache was off, not short-lived)."""
    clock = clock or recording_clock(transcript)
    ttl = recorded_ttl(transcript.usage)
    documented = rules.lifetime_of(ttl)
    reads: list[float] = []
    rewrites: list[float] = []
    if any(u.cache_read_input_tokens for u in transcript.usage.values()):
        _classify_gaps(transcript, clock.times, reads, rewrites)
    longest = max(reads, default=None)
    # A cache that lived through a longer gap lives through a shorter one: a re-write after a
    # shorter gap than a read was caused by a changed prefix, not by time — set aside. So is
    # one within the documented lifetime: the provider promises the entry lives that long (a
    # session's first requests after a tool or System change re-write within seconds).
    floor = documented if documented is not None else 0.0
    timed = [gap for gap in rewrites if (longest is None or gap > longest) and gap > floor]
    inference = LifetimeInference(
        documented, longest, min(timed, default=None), len(reads), len(timed), ttl=ttl
    )
    lifetime = documented
    if not inference.agrees:
        shortest = inference.shortest_rewrite
        lifetime = longest if longest is not None else max((shortest or 1.0) - 1.0, 0.0)
    return dataclasses.replace(inference, lifetime=lifetime, set_aside=len(rewrites) - len(timed))


def _classify_gaps(
    transcript: Transcript,
    times: Mapping[int, float],
    reads: list[float],
    rewrites: list[float],
) -> None:
    """Sort each gap between consecutive timed replies, both with usage, into ``reads`` or
    ``rewrites`` (see `infer_lifetime`)."""
    usage = transcript.usage
    previous: tuple[float, ProviderUsage | None] | None = None
    for index, message in enumerate(transcript.messages):
        if not isinstance(message, AssistantMessage):
            continue
        at = times.get(index)
        if at is None:
            previous = None  # no clock for the gaps next to it
            continue
        bill = usage.get(index)
        if previous is not None and bill is not None and at > previous[0]:
            before = previous[1]
            prefix = before.total_input_tokens if before is not None else 0
            if prefix >= MIN_PREFIX:
                gap = at - previous[0]
                if bill.cache_read_input_tokens >= READ_SHARE * prefix:
                    reads.append(gap)
                elif bill.total_input_tokens >= RESENT_SHARE * prefix:
                    rewrites.append(gap)
        previous = (at if previous is None else max(at, previous[0]), bill)


def clocked_rules(
    transcript: Transcript,
    rules: CacheRules,
    clock: RecordingClock | None = None,
    *,
    fixed: CacheRules | None = None,
) -> tuple[CacheRules, LifetimeInference]:
    """``rules`` (a recording's provider's, `cache_rules_for`) set to what the recording shows
    — Anthropic's 1-hour TTL where its usage says so, the lifetime `infer_lifetime` chose —
    with the inference; ``fixed`` (rules a caller passed) are kept as they are, the inference
    only shown."""
    inference = infer_lifetime(transcript, rules, clock)
    if fixed is not None:
        return fixed, inference
    if inference.ttl is not None and rules.kind == "anthropic":
        rules = dataclasses.replace(rules, ttl=inference.ttl)
    return dataclasses.replace(rules, lifetime=inference.lifetime), inference


def manifest_times(
    manifests: Sequence[ContextManifest], times: Mapping[str, float], joined: int | None
) -> list[float | None]:
    """Each manifest's trusted time: its ``sent_at``, else its time in ``times`` (by request
    id); from ``joined`` on, moved so that the first follows the last before it with no gap
    (see `ctxlab.analysis.costs_of_manifests`)."""
    now = time.time()
    clock = [
        trusted_time(m.sent_at if m.sent_at is not None else times.get(m.request_id), now)
        for m in manifests
    ]
    if joined is None or not 0 < joined < len(clock):
        return clock
    before = next((t for t in reversed(clock[:joined]) if t is not None), None)
    after = next((t for t in clock[joined:] if t is not None), None)
    if before is None or after is None:
        return clock
    shift = before - after
    return [*clock[:joined], *(None if t is None else t + shift for t in clock[joined:])]
