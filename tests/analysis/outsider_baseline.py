"""The feasible baseline rebuilt as an outsider would: from docs/concepts/cost.md ("The feasible
baseline, rule by rule", and the providers' rules above it) alone, sharing no code with
``ctxlab/analysis`` — neither its fitting nor its pricing.

Its inputs are what that page names as inputs: the messages, each message's tokens (ctxlab's
count, `TokenCache.message`: the count is an input, not the policy), the window, the recording's
System and tool schemas (counted with `TokenCache.text`), the size of an unrecorded part by
reply when there is one, a price and a provider's cache parameters as plain numbers, and — on a
recording with a clock — each reply's time, the cache's lifetime and the recording's write TTL.

``drop="newest"`` is the control: the same requests but the newest turns before the latest
dropped first — a rule that must not agree.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock
from ctxlab.tokens import TokenCache
from tests.helpers import Message

LOOKBACK = 20
OPENAI_STEP = 128
SYSTEM_FRAMING = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class Tariff:
    """USD per million tokens; ``tier`` applies to a request of more than ``above`` input."""

    input: float
    output: float
    write: float
    read: float
    above: int | None = None
    tier: Tariff | None = None
    write_1h: float | None = None


@dataclass(frozen=True)
class Caching:
    """A provider's cache: ``kind`` anthropic, openai, google or none; its minimum; how long
    an entry lives after its last write or read (None: forever) for writes at ``ttl``; the
    TTL the baseline's requests write at (None: ``ttl``)."""

    kind: Literal["anthropic", "openai", "google", "none"]
    minimum: int = 1024
    bills_writes: bool = False
    lifetime: float | None = None
    ttl: Literal["5m", "1h"] = "5m"
    write_ttl: Literal["5m", "1h"] | None = None

    @property
    def hour(self) -> bool:
        """Whether the writes are Anthropic's 1-hour ones (billed at that price)."""
        return self.kind == "anthropic" and (self.write_ttl or self.ttl) == "1h"

    @property
    def write_lifetime(self) -> float | None:
        """How long a write lives: the rules' lifetime, or the documented one of another TTL."""
        if self.kind != "anthropic" or self.write_ttl in (None, self.ttl):
            return self.lifetime
        return TTL_SECONDS[self.write_ttl]


@dataclass(frozen=True)
class Part:
    """One part of a request: what it is (by content), its tokens, its content blocks."""

    key: str
    tokens: int
    blocks: int = 1


@dataclass(frozen=True)
class Request:
    """One request of the baseline: its parts, how many lead as the fixed part, its answer."""

    parts: tuple[Part, ...]
    fixed: int
    output: int
    cut: bool
    at: float | None = None
    """When it was sent (its reply's time, POSIX seconds); None: no time."""

    @property
    def input(self) -> int:
        return sum(p.tokens for p in self.parts)


@dataclass(frozen=True)
class Billed:
    """One request's bill: input tokens by how they are billed, and the dollars."""

    uncached: int
    written: int
    read: int
    dollars: float


@dataclass
class Baseline:
    """The baseline of one session: its requests and their bills."""

    requests: list[Request]
    bills: list[Billed] = field(default_factory=list)

    @property
    def over_limit(self) -> int:
        return sum(r.cut for r in self.requests)

    @property
    def input_tokens(self) -> int:
        return sum(r.input for r in self.requests)

    @property
    def cost(self) -> float:
        return sum(b.dollars for b in self.bills)


def input_limit(window: int) -> int:
    """The default budget's input limit: the window less its eighth (at most 4,096) and 2 %."""
    return window - max(1, min(window // 8, 4096)) - max(1, window * 2 // 100)


def _identity(message: Message) -> str:
    dumped = json.dumps(
        [message.role, [b.model_dump(mode="json") for b in message.content]], sort_keys=True
    )
    return "m:" + hashlib.sha256(dumped.encode()).hexdigest()


def _pinned(messages: Sequence[Message]) -> int:
    """The first user message that answers no call made before it (len: none)."""
    calls: set[str] = set()
    for n, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            calls |= {b.id for b in message.content if isinstance(b, ToolUseBlock)}
            continue
        answers = {b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)}
        if not answers & calls:
            return n
    return len(messages)


def fixed_part(
    system: str, rendered_tools: Sequence[str], cache: TokenCache, unrecorded: int = 0
) -> tuple[Part, ...]:
    """The unrecorded part (when any), each tool schema, the System (when any)."""
    parts = [Part("unrecorded", unrecorded)] if unrecorded else []
    parts += [Part("tool:" + text, cache.text(text)) for text in rendered_tools]
    if system:
        parts.append(Part("system:" + system, cache.text(system) + SYSTEM_FRAMING))
    return tuple(parts)


def _turns(messages: Sequence[Message], pinned: int) -> list[list[int]]:
    """The lead (maybe empty), then one turn per assistant message after ``pinned``."""
    turns: list[list[int]] = [[]]
    for n in range(pinned + 1, len(messages)):
        if isinstance(messages[n], AssistantMessage):
            turns.append([])
        turns[-1].append(n)
    return turns


def baseline_requests(
    messages: Sequence[Message],
    cache: TokenCache,
    fixed: Callable[[int], tuple[Part, ...]],
    limit: int,
    drop: Literal["oldest", "newest"] = "oldest",
    times: Mapping[int, float] | None = None,
) -> list[Request]:
    """The baseline's requests, one per assistant message after the pinned one, each sent at
    its reply's time (``times``, by message index); ``fixed`` gives the fixed part of the
    request that produced the reply at an index."""
    pinned = _pinned(messages)
    if pinned == len(messages):
        return []
    parts = [Part(_identity(m), cache.message(m), max(len(m.content), 1)) for m in messages]
    turns = _turns(messages, pinned)
    kept: list[int] = []  # the turns (by number) still sent, oldest first
    requests: list[Request] = []
    for number in range(1, len(turns)):
        reply = turns[number][0]
        # The turn that ends just before this reply is the latest; the control starts from
        # every turn at each request.
        kept = list(range(number)) if drop == "newest" else [*kept, number - 1]
        lead = fixed(reply)
        room = limit - sum(p.tokens for p in lead) - parts[pinned].tokens
        size = sum(parts[i].tokens for t in kept for i in turns[t])
        while size > room and len(kept) > 1:
            gone = kept.pop(0 if drop == "oldest" else -2)
            size -= sum(parts[i].tokens for i in turns[gone])
        if size <= room:
            body = [parts[i] for t in kept for i in turns[t]]
        else:
            body = _cut(messages, parts, turns[kept[-1]], room, reply)
        requests.append(
            Request(
                (*lead, parts[pinned], *body),
                len(lead),
                parts[reply].tokens,
                size > room,
                (times or {}).get(reply),
            )
        )
    return requests


def _cut(
    messages: Sequence[Message], parts: Sequence[Part], latest: list[int], room: int, reply: int
) -> list[Part]:
    """A latest turn too large alone: its call whole (the lead has none), its other messages
    one part of what is left of ``room`` (none when nothing is left or nothing follows)."""
    call = (
        [parts[latest[0]]] if latest and isinstance(messages[latest[0]], AssistantMessage) else []
    )
    left = room - sum(p.tokens for p in call)
    if len(latest) > len(call) and left > 0:
        return [*call, Part(f"cut:{reply}", left)]
    return call


@dataclass
class _Clock:
    """The cache's clock: the gaps between requests summed — each the later time less the
    latest one before it, never negative, 0 next to a request without a time; it starts at 0
    at the first request with one (before it, nothing expires)."""

    now: float = 0.0
    last: float | None = None
    started: bool = False

    def tick(self, at: float | None) -> None:
        if at is None or not math.isfinite(at):
            self.last = None
            return
        if self.started and self.last is not None and at > self.last:
            self.now += at - self.last
        self.started = True
        self.last = at if self.last is None else max(at, self.last)


@dataclass
class _Entries:
    """Cached prefixes: their tokens, when they lapse and how long they live."""

    clock: _Clock
    held: dict[str, tuple[int, float, float]] = field(default_factory=dict)

    def alive(self, fingerprint: str) -> bool:
        held = self.held.get(fingerprint)
        return held is not None and (not self.clock.started or held[1] >= self.clock.now)

    def touch(self, fingerprint: str, tokens: int, life: float | None) -> None:
        """Written or read now: it lives ``life`` seconds from now (None: forever)."""
        life = math.inf if life is None else life
        self.held[fingerprint] = (tokens, self.clock.now + life, life)


def bill(requests: Sequence[Request], tariff: Tariff, caching: Caching) -> list[Billed]:
    """Each request's bill, in order, each reading what the earlier ones left alive."""
    clock = _Clock()
    entries = _Entries(clock)
    bills = []
    for request in requests:
        clock.tick(request.at)
        prints, totals = _prefixes(request.parts)
        total = totals[-1] if totals else 0
        read = written = 0
        if caching.kind == "anthropic":
            read, written = _anthropic(request, prints, totals, entries, caching)
        elif caching.kind in ("openai", "google"):
            read = _automatic(prints, totals, entries, caching)
            if caching.bills_writes and total >= caching.minimum:
                written = total - read
        price = _at_tier(tariff, total)
        write_price = price.write_1h if caching.hour and price.write_1h is not None else price.write
        dollars = (
            (total - read - written) * price.input
            + written * write_price
            + read * price.read
            + request.output * price.output
        ) / 1e6
        bills.append(Billed(total - read - written, written, read, dollars))
    return bills


def _anthropic(
    request: Request, prints: list[str], totals: list[int], entries: _Entries, caching: Caching
) -> tuple[int, int]:
    """Read and written tokens: the longest alive prefix a breakpoint finds is read (and lives
    again from now); the prefix up to each breakpoint of at least the minimum is written."""
    marks = [m for m in (request.fixed - 1, len(request.parts) - 1) if m >= 0]
    found = [_found(request.parts, prints, m, entries) for m in marks]
    longest = max((e for e in found if e >= 0), key=lambda e: totals[e], default=-1)
    read = totals[longest] if longest >= 0 else 0
    if longest >= 0:
        entries.touch(prints[longest], read, entries.held[prints[longest]][2])
    top = read
    for mark in marks:
        if totals[mark] >= caching.minimum:
            entries.touch(prints[mark], totals[mark], caching.write_lifetime)
            top = max(top, totals[mark])
    return read, top - read


def _automatic(prints: list[str], totals: list[int], entries: _Entries, caching: Caching) -> int:
    """The read of an automatic cache: the longest alive prefix an earlier request sent, at
    least the minimum, OpenAI's in whole 128-token steps; every prefix of the request then
    lives from now."""
    alive = [t for p, t in zip(prints, totals, strict=True) if entries.alive(p)]
    read = max(alive, default=0)
    for fingerprint, tokens in zip(prints, totals, strict=True):
        entries.touch(fingerprint, tokens, caching.lifetime)
    if read < caching.minimum:
        return 0
    return read - read % OPENAI_STEP if caching.kind == "openai" else read


def _prefixes(parts: Sequence[Part]) -> tuple[list[str], list[int]]:
    """A fingerprint of each prefix (up to and with each part) and its tokens."""
    prints: list[str] = []
    totals: list[int] = []
    running = hashlib.sha256()
    total = 0
    for part in parts:
        running.update(part.key.encode() + b"\x00")
        prints.append(running.copy().hexdigest())
        total += part.tokens
        totals.append(total)
    return prints, totals


def _found(parts: Sequence[Part], prints: list[str], mark: int, entries: _Entries) -> int:
    """The part index where the longest alive cached prefix the breakpoint after part ``mark``
    finds ends — one at a part boundary with at most 20 content blocks between it and the
    breakpoint (-1: none)."""
    between = 0
    for end in range(mark, -1, -1):
        if between > LOOKBACK:
            break
        if entries.alive(prints[end]):
            return end
        between += parts[end].blocks
    return -1


def _at_tier(tariff: Tariff, total: int) -> Tariff:
    if tariff.above is not None and tariff.tier is not None and total > tariff.above:
        return tariff.tier
    return tariff


def outsider_baseline(
    messages: Sequence[Message],
    cache: TokenCache,
    fixed: Callable[[int], tuple[Part, ...]],
    limit: int,
    tariff: Tariff,
    caching: Caching,
    drop: Literal["oldest", "newest"] = "oldest",
    times: Mapping[int, float] | None = None,
) -> Baseline:
    """The baseline's requests and their bills."""
    requests = baseline_requests(messages, cache, fixed, limit, drop, times)
    return Baseline(requests, bill(requests, tariff, caching))
