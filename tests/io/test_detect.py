"""`detect_format` and `detect_lines`: which importer a session goes to — the specific formats
first, the chat formats (known by their role fields alone) last, a JSON Lines file by its first
twenty lines (its lines of one line format outvoting a foreign first line) — and, when no rule
fits, an error that says what the data looked like and which formats were considered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io._detect import detect_lines
from tests.strategies import SETTINGS

FIXTURES = Path(__file__).parents[1] / "fixtures"
CLAUDE_LINE = json.loads(
    (FIXTURES / "sessions" / "claude_code_session.jsonl").read_text().splitlines()[1]
)
CODEX_LINE = json.loads(
    (FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl").read_text().splitlines()[0]
)
CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
"""Role and text alone: the chat format without an OpenAI mark is Anthropic's."""


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "langfuse" / "langfuse_spans.json",
        FIXTURES / "openllmetry" / "openai_spans.json",
        FIXTURES / "openai_agents" / "chat_trace.json",
        FIXTURES / "vercel_ai" / "vercel_ai_otlp.json",
    ],
    ids=lambda p: p.parent.name,
)
def test_otel_exports_go_to_the_otel_importer(path: Path) -> None:
    assert detect_format(json.loads(path.read_text())) == "otel"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # A request body: its messages' shape says whose.
        ({"messages": [{"role": "system", "content": "be brief"}, *CHAT]}, "openai"),
        ({"messages": CHAT}, "anthropic"),
        (
            {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c", "content": "4"}]},
            "openai",
        ),
        # One message alone.
        ({"role": "assistant", "content": None, "tool_calls": []}, "openai"),
        ({"role": "user", "content": [{"type": "text", "text": "hi"}]}, "anthropic"),
        ({"type": "meta", "name": "s"}, "ctxlab"),
    ],
)
def test_a_document_goes_to_its_importer(value: Any, expected: str) -> None:
    assert detect_format(value) == expected


def test_lists_go_to_the_most_specific_importer_first() -> None:
    # Each of these is also a list of role dicts: the specific rule wins over the chat formats.
    gemini = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
    ]
    assert detect_format(gemini) == "gemini"
    mini = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "fix it"},
        {"role": "exit", "content": "Submitted"},
    ]
    assert detect_format(mini) == "mini_swe_agent"
    assert detect_format([CODEX_LINE]) == "codex"  # rollout lines saved as one array
    assert detect_format([CODEX_LINE, {"unrelated": True}]) == "codex"  # by its first line
    episodes = [{"task_id": n, "traj": [], "reward": 1.0} for n in range(3)]
    # tau-bench results: judged by their first three episodes.
    assert detect_format([*episodes, {"task_id": 3, "reward": 0.0}]) == "tau_bench"
    assert detect_format(CHAT) == "anthropic"
    assert detect_format([{"role": "developer", "content": "x"}, *CHAT]) == "openai"


@SETTINGS
@given(
    st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=70),
    st.integers(min_value=0, max_value=69),
    st.sampled_from(["system", "tool", "developer"]),
)
def test_a_chat_list_is_openai_with_an_openai_role_anywhere_else_anthropic(
    roles: list[str], at: int, openai_role: str
) -> None:
    chat = [{"role": r, "content": f"turn {n}"} for n, r in enumerate(roles)]
    assert detect_format(chat) == "anthropic"
    marked = [*chat[:at], {"role": openai_role, "content": "x"}, *chat[at:]]
    assert detect_format(marked) == "openai"


@SETTINGS
@given(st.integers(min_value=1, max_value=60), st.sampled_from([{"x": 1}, 5, "role", None]))
def test_a_chat_list_is_judged_by_its_first_fifty_items(length: int, junk: Any) -> None:
    # Past the fiftieth item nothing is looked at; before it, an item that is not a message
    # means this is no chat.
    chat = [{"role": "user" if n % 2 == 0 else "assistant", "content": "t"} for n in range(length)]
    value = [*chat, junk]
    if length >= 50:
        assert detect_format(value) == "anthropic"
    else:
        with pytest.raises(MessageFormatError, match="cannot tell the format"):
            detect_format(value)


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        ({"x": 1}, "an object with keys 'x'"),
        ({}, "an empty object"),
        (
            {str(k): k for k in range(8)},
            "an object with keys '0', '1', '2', '3', '4', '5'): ",  # the first six
        ),
        ([], "an empty list"),
        ([{"x": 1}], "a list of 1, the first an object"),
        ([5, {"x": 1}], "a list of 2, the first a JSON int"),
        (["text"], "a list of 1, the first a JSON str"),
        ("a session", "a JSON str"),
        (3.5, "a JSON float"),
    ],
)
def test_what_no_rule_reads_is_refused_saying_what_it_looked_like(value: Any, shape: str) -> None:
    with pytest.raises(MessageFormatError) as caught:
        detect_format(value)
    message = str(caught.value)
    assert message.startswith("cannot tell the format of this session (")
    assert f"({shape}" in message
    assert (
        "it reads as none of ctxlab, claude_code, anthropic, openai, openai_responses," in message
    )
    assert message.endswith(
        "goose, specstory, atif; if it is one of them, pass format= to read it as that"
    )


def _records(*values: Any) -> list[tuple[int, Any]]:
    return list(enumerate(values, start=1))


def test_a_file_is_its_first_lines_format() -> None:
    assert detect_lines(_records(CLAUDE_LINE, CLAUDE_LINE)) == "claude_code"
    assert detect_lines(_records(CODEX_LINE, {"x": 1})) == "codex"
    assert detect_lines(_records({"type": "meta", "name": "s"}, *CHAT)) == "ctxlab"


def test_a_foreign_first_line_is_outvoted_by_the_lines_after_it() -> None:
    # One line of another tool before a Claude Code session (even a session of one line).
    assert detect_lines(_records(CHAT[0], CLAUDE_LINE)) == "claude_code"
    assert detect_lines(_records({"x": 1}, CLAUDE_LINE, CLAUDE_LINE)) == "claude_code"
    # The line format most of them are.
    assert detect_lines(_records(CHAT[0], CODEX_LINE, CLAUDE_LINE, CODEX_LINE)) == "codex"
    # Chat lines do not outvote: they say nothing of the file.
    assert detect_lines(_records({"type": "meta", "name": "s"}, *CHAT * 5)) == "ctxlab"


def test_only_the_first_twenty_lines_vote() -> None:
    later = [{"x": n} for n in range(18)]
    assert detect_lines(_records(CHAT[0], *later, CLAUDE_LINE)) == "claude_code"  # 20th line
    assert detect_lines(_records(CHAT[0], *later, {"x": 18}, CLAUDE_LINE)) == "anthropic"


def test_a_file_whose_first_line_no_rule_reads_is_refused_naming_that_line() -> None:
    with pytest.raises(MessageFormatError, match=r"\(an object with keys 'x', 'y'\)"):
        detect_lines(_records({"x": 1, "y": 2}))
    with pytest.raises(MessageFormatError, match=r"\(a JSON int\)"):
        detect_lines(_records(7, {"x": 1}))
