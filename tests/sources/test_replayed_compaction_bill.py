"""In the replayed view too, a recorded compaction's mark says what the recording said before
it (its ``preTokens``) and what the first request after it billed — read here from the raw
file, with a few lines of JSON parsing that share nothing with ctxlab's importer."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.io import load
from ctxlab.sources import ReplaySession
from ctxlab.tokens import ApproximateCounter

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def _raw() -> tuple[list[int], list[int]]:
    bills: dict[str, int] = {}
    pre: list[int] = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("subtype") == "compact_boundary":
            pre.append(record["compactMetadata"]["preTokens"])
        message = record.get("message") or {}
        usage = message.get("usage") or {}
        if record.get("type") == "assistant" and usage and message.get("id") not in bills:
            bills[message["id"]] = sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
    return list(bills.values()), pre


async def test_the_replayed_views_mark_carries_the_bill_of_the_request_after_it() -> None:
    bills, (pre,) = _raw()
    manifests = await ReplaySession(
        load(FIXTURE), context_window=200_000, counter=ApproximateCounter(), view="replayed"
    ).run()
    marks = [
        (step, t.detail, t.tokens_before, t.tokens_after)
        for step, m in enumerate(manifests)
        for t in m.transforms
        if t.kind == "recorded_compaction"
    ]
    assert marks == [(3, "manual", pre, bills[3])]
    assert (pre, bills[3]) == (20_900, 14_358)
