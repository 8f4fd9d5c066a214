"""The TTL split of Anthropic's cache writes as a recording gives it: trusted when its two parts
add up to the total, else the total kept, the 1-hour part only when it fits inside it, and the
reply flagged (``meta["cache_split_flagged"]``) — never an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io import load
from tests.io.claude_lines import exchange
from tests.strategies import json_value


def _session(path: Path, usages: list[dict[str, Any]]) -> Path:
    """A Claude Code session of one reply per usage, each answering a prompt of its own."""
    lines: list[dict[str, Any]] = []
    for n, usage in enumerate(usages):
        lines += exchange(n, {"id": f"msg_{n}", "model": "claude-opus-4-6", "usage": usage})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _usage(total: int, split: Any = None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": 3,
        "output_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": total,
    }
    if split is not None:
        usage["cache_creation"] = split
    return usage


def _split(five: Any, hour: Any) -> dict[str, Any]:
    return {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}


def test_a_split_that_adds_up_gives_the_1_hour_writes(tmp_path: Path) -> None:
    usages = [_usage(900, _split(0, 900)), _usage(500, _split(200, 300)), _usage(40, _split(40, 0))]
    transcript = load(_session(tmp_path / "s.jsonl", usages))
    hours = [u.cache_creation_1h_input_tokens for _, u in sorted(transcript.usage.items())]
    assert hours == [900, 300, 0]
    assert [u.cache_creation_input_tokens for _, u in sorted(transcript.usage.items())] == [
        900,
        500,
        40,
    ]
    assert transcript.meta["cache_split_recorded"] == 3
    assert "cache_split_flagged" not in transcript.meta


def test_a_split_that_does_not_add_up_is_flagged_and_not_trusted(tmp_path: Path) -> None:
    usages = [
        _usage(500, _split(100, 300)),  # short of the total: the 1-hour part fits, kept
        _usage(500, _split(0, 800)),  # more than the total: not kept
        _usage(500, _split(-5, 505)),  # a count that is no count
        _usage(500, "1h"),  # not an object
        _usage(500, _split(200, 300)),  # adds up
        _usage(500),  # no split recorded: nothing to flag
    ]
    transcript = load(_session(tmp_path / "s.jsonl", usages))
    replies = sorted(transcript.usage)
    usage = [transcript.usage[i] for i in replies]
    assert [u.cache_creation_input_tokens for u in usage] == [500] * 6
    assert [u.cache_creation_1h_input_tokens for u in usage] == [300, 0, 0, 0, 300, 0]
    assert transcript.meta["cache_split_flagged"] == replies[:4]
    assert transcript.meta["cache_split_recorded"] == 5


def test_the_split_survives_saving_and_loading(tmp_path: Path) -> None:
    transcript = load(_session(tmp_path / "s.jsonl", [_usage(900, _split(100, 800))]))
    again = load(transcript.save(tmp_path / "saved.jsonl"))
    assert again.usage == transcript.usage
    assert next(iter(again.usage.values())).cache_creation_1h_input_tokens == 800
    assert again.times == transcript.times


@settings(max_examples=60, deadline=None)
@given(total=st.integers(0, 10_000), split=json_value)
def test_any_split_loads_and_never_claims_more_than_the_total(
    tmp_path_factory: pytest.TempPathFactory, total: int, split: Any
) -> None:
    path = _session(tmp_path_factory.mktemp("split") / "s.jsonl", [_usage(total, split)])
    transcript = load(path)
    (usage,) = transcript.usage.values()
    assert usage.cache_creation_input_tokens == total
    assert 0 <= usage.cache_creation_1h_input_tokens <= total
    counts = [_as_count(split.get(k, 0)) for k in _split(0, 0)] if isinstance(split, dict) else []
    adds_up = len(counts) == 2 and None not in counts and sum(counts) == total  # type: ignore[arg-type]
    flagged = transcript.meta.get("cache_split_flagged", [])
    assert (flagged == []) == (adds_up or split is None)


def _as_count(value: Any) -> int | None:
    # A count as a provider writes it: a whole number, a whole float, a string of digits (up
    # to 2**40: more is damage).
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip()) if len(value.strip()) <= 20 else -1
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if type(value) is int and 0 <= value <= 2**40 else None
