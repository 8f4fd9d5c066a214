"""Usage numbers nobody should bill from — infinity, NaN, negative, fractional, a cache larger
than the input it is part of — and files that are not files: each format's importer says which
line and field, or clamps where the provider's own arithmetic would (hypothesis too)."""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import ctxlab
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count
from tests.strategies import SETTINGS, typed


def _claude_code(tmp_path: Path, usage: dict[str, Any]) -> Path:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s",
            "requestId": "r1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "yo"}],
                "usage": usage,
            },
        },
    ]
    path = tmp_path / "session.jsonl"
    # json.dumps writes Infinity and NaN as JavaScript does; Python's json reads them back.
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, -5, 2.5, True, "many"])
def test_a_claude_code_usage_nobody_can_bill_names_its_line_and_field(
    tmp_path: Path, bad: Any
) -> None:
    path = _claude_code(tmp_path, {"input_tokens": 10, "output_tokens": bad})
    with pytest.raises(MessageFormatError, match=r"line 2: usage field 'output_tokens' is "):
        ctxlab.load(path)


def test_whole_floats_and_digit_strings_are_counts(tmp_path: Path) -> None:
    path = _claude_code(tmp_path, {"input_tokens": 10.0, "output_tokens": "7"})
    assert ctxlab.load(path).usage[1] == ProviderUsage(10, 7, 0, 0)


def test_ctxlabs_own_usage_meta_is_checked(tmp_path: Path) -> None:
    session = ctxlab.Transcript(
        "t",
        {},
        "",
        (ctxlab.UserMessage(content="hi"), ctxlab.AssistantMessage(content="yo")),
        usage={1: ProviderUsage(5, 2)},
    )
    path = session.save(tmp_path / "t.jsonl")
    assert ctxlab.load(path).usage == {1: ProviderUsage(5, 2)}
    text = path.read_text().replace("[5, 2, 0, 0]", "[Infinity, 2, 0, 0]")
    assert "Infinity" in text
    path.write_text(text)
    with pytest.raises(MessageFormatError, match=r"line 1: meta\.usage"):
        ctxlab.load(path)


def test_an_openai_cache_larger_than_its_prompt_leaves_no_negative_input(tmp_path: Path) -> None:
    from ctxlab.io.formats._chat import openai_usage

    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 50},
    }
    assert openai_usage(usage) == ProviderUsage(0, 2, 50, 0)
    assert openai_usage({"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 50}}) == (
        ProviderUsage(40, 0, 50, 0)
    )
    with pytest.raises(ValueError, match="'input_tokens' is -1"):
        openai_usage({"prompt_tokens": -1})


def test_otel_usage_names_its_attributes() -> None:
    from ctxlab.io.formats.otel.parse import _usage

    attrs = {"gen_ai.usage.input_tokens": float("inf"), "gen_ai.usage.output_tokens": 3}
    with pytest.raises(ValueError, match=r"is inf.*gen_ai\.usage\.input_tokens"):
        _usage(attrs, *[f"gen_ai.usage.{k}" for k in ("input_tokens", "output_tokens", "r", "w")])


def test_provider_usage_refuses_what_cannot_be_a_count() -> None:
    with pytest.raises(ValueError, match="'cache_read_input_tokens' is -3"):
        ProviderUsage(1, 1, -3)
    with pytest.raises(ValueError, match="'input_tokens' is nan"):
        ProviderUsage(math.nan, 1)  # type: ignore[arg-type]
    assert ProviderUsage(3.0, 1).input_tokens == 3  # type: ignore[arg-type]
    assert type(ProviderUsage(3.0, 1).input_tokens) is int  # type: ignore[arg-type]


@SETTINGS
@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
    )
)
# Digits that str.isdigit() accepts and int() refuses (or reads): always tried, not only when
# Hypothesis happens to draw them.
@example("¹")
@example("①")
@example("٣")
@example(" 12 ")
def test_a_token_count_is_a_whole_number_from_0_or_refused(value: Any) -> None:
    try:
        count = token_count(value, "f")
    except ValueError as exc:
        assert "usage field 'f' is" in str(exc)
        return
    assert type(count) is int and count >= 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        assert count == value
    if isinstance(value, str):
        assert value.strip().isascii() and count == int(value.strip())


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ]
        ),
        st.one_of(
            st.integers(-5, 10**9), st.floats(allow_nan=True), st.text(max_size=4), st.none()
        ),
    )
)
def test_claude_code_usage_of_any_numbers_loads_or_says_why(
    tmp_path_factory: Any, usage: Any
) -> None:
    path = _claude_code(tmp_path_factory.mktemp("u"), usage)
    loaded = typed(ctxlab.load, path)
    if loaded is not None:
        # One bill, or none when every count is zero or missing (an empty usage is no bill).
        bills = list(loaded.usage.values())
        assert len(bills) <= 1
        assert all(not b.empty and min(b.input_tokens, b.output_tokens) >= 0 for b in bills)
        assert bool(bills) == any(
            v not in (None, 0, 0.0, "0") and str(v).strip() not in ("0", "") for v in usage.values()
        )


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            ctxlab.load(fifo)
        except BaseException as exc:  # collected for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "w"):
            pass
        pytest.fail("load() blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], MessageFormatError)
    assert "not a regular file" in str(outcome[0])


def test_a_folder_is_refused_with_the_way_to_list_it(tmp_path: Path) -> None:
    with pytest.raises(MessageFormatError, match=r"is a folder; ctxlab.sessions\(folder\)"):
        ctxlab.load(tmp_path)


def test_a_tool_input_nested_too_deeply_is_a_format_error(tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(600):
        deep = {"a": deep}
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": deep}],
        },
    ]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(messages))
    with pytest.raises(MessageFormatError, match=r"message 1 .*nested more than 100 levels"):
        ctxlab.load(path)
    # 90 levels is a real (if odd) input, and loads.
    shallow: Any = 1
    for _ in range(90):
        shallow = {"a": shallow}
    messages[1]["content"][0]["input"] = shallow  # type: ignore[index]
    path.write_text(json.dumps(messages))
    assert ctxlab.load(path).messages[1].tool_uses[0].input == shallow
