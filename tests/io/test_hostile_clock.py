"""Hostile timestamps, the stated rule (docs/errors.md): a time missing or unreadable leaves its
reply undated and every other reply keeps its own; times out of order, equal or in the future
are kept as recorded; NaN, negative and overflowing numbers are no time; nothing crashes.
Generated sessions of Claude Code, Codex and Gemini CLI, each reply's stamp drawn here with the
time it stands for (None: no time)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage
from tests.io.claude_lines import exchange
from tests.strategies import any_text

_ZONES = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23))
)
_MOMENTS = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.none() | _ZONES
)


@st.composite
def _readable(draw: st.DrawFn) -> tuple[Any, float]:
    """ISO 8601 text a tool writes (a zone, ``Z``, or none — read as UTC) and its time."""
    moment = draw(_MOMENTS)
    spec = draw(st.sampled_from(["seconds", "milliseconds", "auto"]))
    text = moment.isoformat(timespec=spec)
    # What the text holds: the fraction the timespec keeps.
    kept = {"seconds": 0, "milliseconds": moment.microsecond // 1000 * 1000}
    moment = moment.replace(microsecond=kept.get(spec, moment.microsecond))
    if moment.tzinfo is not None and moment.utcoffset() == timedelta(0) and draw(st.booleans()):
        text = text.replace("+00:00", "Z")
    seconds = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return text, seconds


_NO_TIME = st.one_of(
    st.none(),
    st.booleans(),
    # A number where the format writes text: its unit is unknown.
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text.map(lambda t: "x" + t),  # text no ISO 8601 starts with
    st.sampled_from(["", " ", "2026-13-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01", "now"]),
    st.just("9" * 200),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_STAMP = st.one_of(_readable(), _NO_TIME.map(lambda v: (v, None)))
SETTINGS = settings(max_examples=60, deadline=None)


def _times_in_order(transcript: Transcript) -> list[float | None]:
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    return [transcript.times.get(i) for i in replies]


def _same(got: list[float | None], want: list[float | None]) -> bool:
    return len(got) == len(want) and all(
        (g is None and w is None) or (g is not None and w is not None and math.isclose(g, w))
        for g, w in zip(got, want, strict=True)
    )


def _write(folder: Path, name: str, lines: list[Any]) -> Path:
    path = folder / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@SETTINGS
@given(stamps=st.lists(_STAMP, min_size=1, max_size=6), missing=st.lists(st.booleans()))
def test_claude_code_replies_keep_their_own_time_whatever_the_others(
    tmp_path_factory: pytest.TempPathFactory,
    stamps: list[tuple[Any, float | None]],
    missing: list[bool],
) -> None:
    lines: list[Any] = []
    want: list[float | None] = []
    for n, (stamp, seconds) in enumerate(stamps):
        lines.append(
            {"type": "user", "sessionId": "s", "message": {"role": "user", "content": f"q{n}"}}
        )
        line: dict[str, Any] = {
            "type": "assistant",
            "sessionId": "s",
            "requestId": f"r{n}",
            "message": {
                "role": "assistant",
                "id": f"m{n}",
                "content": [{"type": "text", "text": f"a{n}"}],
            },
        }
        gone = n < len(missing) and missing[n]
        if not gone:
            line["timestamp"] = stamp
        lines.append(line)
        want.append(None if gone else seconds)
    transcript = load(_write(tmp_path_factory.mktemp("cc"), "s.jsonl", lines))
    assert _same(_times_in_order(transcript), want), (_times_in_order(transcript), want)


@SETTINGS
@given(stamps=st.lists(_STAMP, min_size=1, max_size=6))
def test_codex_replies_keep_their_own_time_whatever_the_others(
    tmp_path_factory: pytest.TempPathFactory, stamps: list[tuple[Any, float | None]]
) -> None:
    meta = {"id": "r", "cwd": "/w", "cli_version": "0.98.0"}
    lines: list[Any] = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": meta}
    ]
    for n, (stamp, _) in enumerate(stamps):
        asked = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"q{n}"}],
        }
        said = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"a{n}"}],
        }
        lines.append(
            {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": asked}
        )
        lines.append({"timestamp": stamp, "type": "response_item", "payload": said})
    transcript = load(
        _write(tmp_path_factory.mktemp("codex"), "rollout.jsonl", lines), format="codex"
    )
    assert _same(_times_in_order(transcript), [seconds for _, seconds in stamps])


@SETTINGS
@given(stamps=st.lists(_STAMP, min_size=1, max_size=6))
def test_gemini_cli_replies_keep_their_own_time_whatever_the_others(
    tmp_path_factory: pytest.TempPathFactory, stamps: list[tuple[Any, float | None]]
) -> None:
    lines: list[Any] = [{"sessionId": "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z"}]
    for n, (stamp, _) in enumerate(stamps):
        lines.append(
            {
                "id": f"u{n}",
                "timestamp": "2026-01-01T00:00:00Z",
                "type": "user",
                "content": [{"text": f"q{n}"}],
            }
        )
        lines.append(
            {"id": f"g{n}", "timestamp": stamp, "type": "gemini", "content": [{"text": f"a{n}"}]}
        )
    transcript = load(
        _write(tmp_path_factory.mktemp("gemini"), "session.jsonl", lines), format="gemini_cli"
    )
    assert _same(_times_in_order(transcript), [seconds for _, seconds in stamps])


def test_out_of_order_equal_and_future_times_are_kept_as_recorded(tmp_path: Path) -> None:
    stamps = [
        "2026-02-12T14:00:00Z",
        "2026-02-12T13:00:00Z",
        "2026-02-12T13:00:00Z",
        "2999-01-01T00:00:00Z",
    ]
    lines: list[Any] = []
    for n, stamp in enumerate(stamps):
        lines += exchange(n, {"id": f"m{n}"}, timestamp=stamp)
    transcript = load(_write(tmp_path, "s.jsonl", lines))
    assert _times_in_order(transcript) == [
        1770904800.0,  # 14:00
        1770901200.0,  # 13:00: before the one before, kept
        1770901200.0,  # equal, kept
        32472144000.0,  # 2999: in the future, kept
    ]


@pytest.mark.parametrize(
    ("value", "unit", "seconds"),
    [
        (1_770_904_800_000, "ms", 1_770_904_800.0),
        (1_770_904_800_000_000_000, "ns", 1_770_904_800.0),
        (1_770_904_800.5, "s", 1_770_904_800.5),
        ("2026-02-12T14:00:00", "ms", 1_770_904_800.0),  # text read as ISO 8601 whatever the unit
        (float("nan"), "s", None),
        (float("inf"), "ms", None),
        (-1, "s", None),
        (10**400, "ns", None),
        (2**80, "s", None),  # past the year 9999
        (True, "s", None),
        (1_770_904_800, "iso", None),  # a number where the format writes text
        ("2026-02-12T14:00:00+99:00", "iso", None),
        ("x" * 10_000, "iso", None),
    ],
)
def test_one_rule_reads_every_formats_stamp(value: Any, unit: str, seconds: float | None) -> None:
    from ctxlab.io._clock import posix_seconds

    assert posix_seconds(value, unit) == seconds  # type: ignore[arg-type]
