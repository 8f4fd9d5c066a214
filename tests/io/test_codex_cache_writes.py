"""Codex records the cache writes GPT-5.6 and later bill: ``TokenUsage.cache_write_input_tokens``
(openai/codex ``codex-rs/protocol/src/protocol.rs``, ``#[serde(default)]``: absent in older
rollouts), part of ``input_tokens`` as ``cached_input_tokens`` is. ctxlab reads them as the
request's cache writes — in a rollout and in ``codex exec``'s protocol stream — never as
uncached input.

No public rollout of a GPT-5.6 model with a licence was found; the lines here are the repository's
fixture rollouts (written from Codex's types: tests/fixtures/codex/README.md) with the field
added as ``protocol.rs`` declares it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.io import load
from ctxlab.messages import ProviderUsage

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROLLOUT = FIXTURES / "codex" / "rollout-current-usage-after.jsonl"
EXEC = FIXTURES / "codex_exec" / "exec-0.30.jsonl"
WRITES = (1_200, 300, 0)
"""The cache writes given to the rollout's three calls, in order."""


def _with_writes(lines: list[dict[str, Any]], usages: list[dict[str, Any]]) -> None:
    # Each model call's usage gets its writes, the input grown by them (they are part of it).
    for usage, written in zip(usages, WRITES, strict=True):
        usage["input_tokens"] += written
        usage["cache_write_input_tokens"] = written


def _rollout(tmp_path: Path) -> Path:
    lines = [json.loads(line) for line in ROLLOUT.read_text().splitlines()]
    counts = [
        p["info"]["last_token_usage"]
        for line in lines
        if (p := line["payload"]).get("type") == "token_count" and p.get("info")
    ]
    _with_writes(lines, counts)
    for line in lines:
        if line["type"] == "turn_context":
            line["payload"]["model"] = "gpt-5.6-sol"
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_rollouts_cache_writes_are_read_apart_from_its_input(tmp_path: Path) -> None:
    before = list(load(ROLLOUT).usage.values())
    after = list(load(_rollout(tmp_path)).usage.values())
    assert len(after) == len(before) == 3
    for old, new, written in zip(before, after, WRITES, strict=True):
        # The uncached input and the reads are what they were; the writes are their own.
        assert new == ProviderUsage(
            old.input_tokens, old.output_tokens, old.cache_read_input_tokens, written
        )
        assert new.total_input_tokens == old.total_input_tokens + written


def test_an_exec_streams_token_counts_carry_their_cache_writes(tmp_path: Path) -> None:
    events = [json.loads(line) for line in EXEC.read_text().splitlines()]
    counts = [e["msg"] for e in events if e.get("msg", {}).get("type") == "token_count"]
    assert counts
    written = 700
    for msg in counts:
        msg["input_tokens"] += written
        msg["cache_write_input_tokens"] = written
    path = tmp_path / "exec.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    before = list(load(EXEC).usage.values())
    after = list(load(path).usage.values())
    assert after and len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert new.cache_creation_input_tokens == written
        assert new.input_tokens == old.input_tokens
