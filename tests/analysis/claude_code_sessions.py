"""Claude Code session files made to order: requests with chosen bills and gaps between them,
written in Claude Code's own JSON Lines (what `ctxlab.load` and the independent bill,
`tests.analysis.raw_claude_bill`, both read) — sessions whose cache re-writes are known; and a
recording's reads shuffled (`shuffled_reads`), the control of the cache model's agreement.

Each request's recorded split follows the provider's rules as a bill-payer meets them: the
previous request's prompt is read when its entry is still alive (the gap since it was last
used no longer than the TTL's lifetime), else everything is written again; one token after
the breakpoint stays uncached (Claude Code's usual ``input_tokens``); a prompt shorter than the
model's minimum is neither written nor read.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ctxlab.io._transcript import Transcript
from ctxlab.messages import ProviderUsage

LIFETIMES = {"5m": 300.0, "1h": 3600.0}
MINIMUM = 1024
"""The shortest prefix Claude Sonnet 4.5 caches (the model these sessions name)."""
START = 1_770_000_000.0  # 2026-02-02, seconds


@dataclass(frozen=True)
class Turn:
    """One request: the seconds since the previous one, and what its bill adds."""

    gap: float
    added: int
    """Billed tokens it adds to the previous request's prompt (the first: all of its own)."""
    ttl: str | None = None
    """The TTL its writes get (None: the session's)."""
    blocks: int = 1
    """The content blocks of its reply (what the next request's look-back passes)."""


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def usages(turns: Sequence[Turn], ttl: str = "5m") -> list[dict[str, object]]:
    """The usage each request records under the rules (see the module)."""
    out: list[dict[str, object]] = []
    total = 0
    cached = 0  # the tokens the last request cached (0: none)
    life = 0.0  # the lifetime of their entry
    since = 0.0  # seconds since they were last used
    for turn in turns:
        since += turn.gap
        total += turn.added
        covered = total - 1  # up to the breakpoint
        read = cached if cached and since <= life else 0
        write = covered - read if total >= MINIMUM else 0
        own = turn.ttl or ttl
        if write or read:
            cached, since = read + write, 0.0
        if write:
            life = LIFETIMES[own]
        five, hour = (0, write) if own == "1h" else (write, 0)
        out.append(
            {
                "input_tokens": total - read - write,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": five,
                    "ephemeral_1h_input_tokens": hour,
                },
                "output_tokens": 50,
            }
        )
    return out


def session_lines(
    turns: Sequence[Turn],
    ttl: str = "5m",
    *,
    model: str = "claude-sonnet-4-5-20250929",
    recorded: Sequence[dict[str, object]] | None = None,
) -> list[str]:
    """A Claude Code session of ``turns`` (its usage ``recorded``, else `usages`): a prompt,
    then a reply per request, each answered by the user."""
    recorded = usages(turns, ttl) if recorded is None else recorded
    lines: list[dict[str, object]] = []
    parent: str | None = None
    now = START

    def line(kind: str, message: dict[str, object]) -> None:
        nonlocal parent
        uuid = f"u{len(lines)}"
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": "made-to-order",
                "version": "2.1.39",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": _stamp(now),
            }
        )
        parent = uuid

    for number, (turn, usage) in enumerate(zip(turns, recorded, strict=True)):
        now += turn.gap
        words = " ".join(f"w{number}x{n}" for n in range(max(turn.added // 40, 1)))
        line("user", {"role": "user", "content": f"step {number}: {words}"})
        reply = {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [
                {"type": "text", "text": f"done {number}, part {part}"}
                for part in range(turn.blocks)
            ],
            "stop_reason": "end_turn",
            "usage": usage,
        }
        line("assistant", reply)
    return [json.dumps(record) for record in lines]


def write_session(path: Path, turns: Sequence[Turn], ttl: str = "5m", **keywords: object) -> Path:
    """`session_lines` written to ``path``."""
    path.write_text("\n".join(session_lines(turns, ttl, **keywords)) + "\n", encoding="utf-8")  # type: ignore[arg-type]
    return path


def shuffled_reads(transcript: Transcript, seed: int = 52) -> Transcript:
    """``transcript`` with each request's share of reads taken from another request's, its
    bill's total unchanged (so the cache model, which reads only totals, is the same)."""
    replies = sorted(transcript.usage)
    shares = [
        transcript.usage[r].cache_read_input_tokens / max(transcript.usage[r].total_input_tokens, 1)
        for r in replies
    ]
    random.Random(seed).shuffle(shares)
    usage = {}
    for reply, share in zip(replies, shares, strict=True):
        old = transcript.usage[reply]
        cached = old.cache_read_input_tokens + old.cache_creation_input_tokens
        read = min(round(share * old.total_input_tokens), cached)
        usage[reply] = ProviderUsage(old.input_tokens, old.output_tokens, read, cached - read)
    return dataclasses.replace(transcript, usage=usage)
