"""An independent bill of a Claude Code session file: what Anthropic's prompt cache reads and
writes for each request, and what the recorded usage costs — from the raw JSON Lines and the
provider's documentation alone, written for the tests and sharing no code with ctxlab (not
``ctxlab/analysis/_cost.py``, not the bill check, not the importer).

The rules, read from Anthropic's prompt-caching guide
(platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-06):

- "By default, the cache has a 5-minute lifetime. The cache is refreshed for no additional cost
  each time the cached content is used"; ``"ttl": "1h"`` asks for a 1-hour lifetime; "the
  lifetime is measured from the start of the request that writes or reads the cache entry";
- cache keys are cumulative (a prefix: tools, system, then messages); from each breakpoint
  the system checks backwards, one block boundary at a time, and "only checks up to 20 blocks
  before each explicit cache_control breakpoint" (the breakpoint itself is the first check):
  the longest hit found is read;
- "the minimum cacheable prompt length" is 1,024 tokens, 4,096 for Claude Opus 4.5/4.6 and
  Haiku 4.5, 2,048 for Haiku 3 and 3.5: a shorter prefix is not cached;
- with A the highest hit, B the highest 1-hour breakpoint after it (or A) and C the last
  breakpoint, a request pays reads for A, 1-hour writes for B − A, 5-minute writes for C − B,
  and input for the rest; ``total_input_tokens = cache_read_input_tokens +
  cache_creation_input_tokens + input_tokens``;
- caches are per model; prices: 5-minute writes 1.25× the input price, 1-hour writes 2×, reads
  0.1× (the pricing page's per-model figures in `PRICES`).

What a session file gives of each request (Claude Code's ``~/.claude/projects/*.jsonl``): the
lines of a response share ``message.id``; its first line's ``timestamp`` is when it began (the
request was sent just before); ``message.usage`` its bill, with ``cache_creation`` split by
TTL in newer versions; a ``compact_boundary`` system line restarts the conversation from a
summary. What it does not give — where Claude Code put its breakpoints, and the size of each
part in the provider's tokens — is taken as: each request's breakpoint at its end (Claude Code
marks the latest message), so what a request caches is all it sent, its billed input; a later
request of the same conversation and model sends that again and adds to it (the blocks added
are counted from the lines between the two).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

LIFETIME = {"5m": 300.0, "1h": 3600.0}
LOOKBACK = 20
MINIMUM = {"claude-opus-4-6": 4096, "claude-opus-4-5": 4096, "claude-haiku-4-5": 4096}
"""The minimum cacheable length where it is not 1,024 (prefix of the model's name)."""

PRICES = {
    # USD per million tokens: input, output (the pricing page, read 2026-12-06).
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
}


@dataclass(frozen=True)
class RawRequest:
    """One request of a session file, as the file records it."""

    key: str
    time: float
    model: str
    conversation: int
    """How many compactions came before it."""
    added_blocks: int
    """Content blocks sent after the previous request's prompt (its reply and what followed)."""
    input: int
    read: int
    write: int
    write_1h: int
    output: int

    @property
    def billed(self) -> int:
        return self.input + self.read + self.write


@dataclass
class _Reading:
    requests: dict[str, dict] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    conversation: int = 0
    blocks_since: int = 0


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _blocks(content: object) -> int:
    if isinstance(content, list):
        return len(content)
    return 1 if content else 0


def _assistant_line(reading: _Reading, record: dict) -> None:
    message = record["message"]
    key = message["id"]
    usage = message.get("usage") or {}
    entry = reading.requests.get(key)
    if entry is None:
        entry = reading.requests[key] = {
            "time": _seconds(record["timestamp"]),
            "model": message.get("model", ""),
            "conversation": reading.conversation,
            "added": reading.blocks_since,
            "usage": usage,
            "own_blocks": 0,
        }
        reading.order.append(key)
        reading.blocks_since = 0
    entry["own_blocks"] += _blocks(message.get("content"))
    # Every line repeats the input figures; the output grows to its count on the last.
    if (usage.get("output_tokens") or 0) >= (entry["usage"].get("output_tokens") or 0):
        entry["usage"] = usage


def read_session(path: Path) -> list[RawRequest]:
    """The billed requests of a Claude Code session file, in order (a reply with no bill —
    every count zero — is no request)."""
    reading = _Reading()
    last_reply: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        kind = record.get("type")
        if kind == "assistant":
            if last_reply is not None and record["message"]["id"] != last_reply:
                # The reply before this one is part of what this request sent.
                reading.blocks_since += reading.requests[last_reply]["own_blocks"]
            _assistant_line(reading, record)
            last_reply = record["message"]["id"]
        elif kind == "user" and not record.get("isVisibleInTranscriptOnly"):
            reading.blocks_since += _blocks((record.get("message") or {}).get("content"))
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            reading.conversation += 1
            reading.blocks_since = 0
            last_reply = None
    out = []
    for key in reading.order:
        entry = reading.requests[key]
        usage = entry["usage"]
        counts = [int(usage.get(name) or 0) for name in _FIELDS]
        if not any(counts):
            continue
        split = usage.get("cache_creation") or {}
        out.append(
            RawRequest(
                key,
                entry["time"],
                entry["model"],
                entry["conversation"],
                entry["added"],
                counts[0],
                counts[2],
                counts[3],
                int(split.get("ephemeral_1h_input_tokens") or 0),
                counts[1],
            )
        )
    return out


_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


@dataclass(frozen=True)
class Billed:
    """What the cache rules say one request reads and writes (in the provider's tokens)."""

    read: int
    write: int
    write_1h: int
    expired: bool
    """Whether a prefix this request could have read had been cached and expired."""


@dataclass
class _Entry:
    tokens: int
    last_used: float | None
    lifetime: float


def _minimum(model: str) -> int:
    return next((n for name, n in MINIMUM.items() if model.startswith(name)), 1024)


def _alive(entry: _Entry, now: float | None) -> bool:
    # A clock that went backwards is a gap of nothing, never a negative one.
    if entry.last_used is None or now is None:
        return True
    return now - entry.last_used <= entry.lifetime


def bill(requests: list[RawRequest], *, clock: bool = True) -> list[Billed]:
    """Each request's reads and writes by the rules above (``clock=False``: every entry alive
    forever, the control without a clock)."""
    # (model, conversation, request number) -> the entry its prompt wrote
    cache: dict[tuple[str, int, int], _Entry] = {}
    ttl = "5m"
    out = []
    for number, request in enumerate(requests):
        now = request.time if clock else None
        if request.write_1h:
            ttl = "1h"
        elif request.write:
            ttl = "5m"
        read, expired, found = 0, False, None
        # Backwards from the breakpoint (check 1): an earlier request of this conversation
        # ended ``distance`` blocks before it, at check ``distance + 1``; the first alive entry
        # found is the longest hit.
        distance = 0
        for earlier in range(number - 1, -1, -1):
            distance += requests[earlier + 1].added_blocks
            before = requests[earlier]
            if distance + 1 > LOOKBACK or before.conversation != request.conversation:
                break
            entry = cache.get((request.model, request.conversation, earlier))
            if entry is None:
                continue
            if _alive(entry, now):
                read, found = min(entry.tokens, request.billed), entry
                break
            expired = True
        if found is not None:
            found.last_used = now if now is not None else found.last_used
        written_to = read
        if request.billed >= _minimum(request.model):
            cache[(request.model, request.conversation, number)] = _Entry(
                request.billed, now, LIFETIME[ttl]
            )
            written_to = request.billed
        write = written_to - read
        out.append(Billed(read, write, write if ttl == "1h" else 0, expired and not read))
    return out


def dollars(request: RawRequest) -> float:
    """What the recorded usage of ``request`` costs at its model's list price."""
    name = next(n for n in PRICES if request.model.startswith(n))
    input_price, output_price = PRICES[name]
    five_minute = request.write - request.write_1h
    return (
        request.input * input_price
        + five_minute * input_price * 1.25
        + request.write_1h * input_price * 2
        + request.read * input_price * 0.1
        + request.output * output_price
    ) / 1e6
