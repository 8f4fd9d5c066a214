"""What `load` says when it is called wrong or given a damaged file: the problem and what to
do, in a typed error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab import Agent, load
from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.io import FORMATS
from ctxlab.models import ScriptedModel
from tests.hostile import says
from tests.io.shown import added_up

HISTORY = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_truncated_pretty_printed_file_is_said_to_be_truncated(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(HISTORY, indent=2)[:-25])
    with pytest.raises(
        MessageFormatError, match=r"ends before its JSON document does \(line \d+.*truncated"
    ):
        load(path)


def test_an_unknown_format_lists_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(HISTORY))
    with pytest.raises(UsageError, match="format must be one of ctxlab, claude_code") as caught:
        load(path, format="bogus")  # type: ignore[arg-type]
    assert all(name in str(caught.value) for name in FORMATS)


@pytest.mark.parametrize("episode", ["x", -1, 1.5, True])
def test_an_episode_must_be_a_whole_number(episode: object) -> None:
    with pytest.raises(UsageError, match="episode must be a whole number"):
        load(HISTORY, episode=episode)  # type: ignore[arg-type]


def test_an_instruction_name_is_called_an_instruction_name() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(UsageError, match="invalid instruction name '<b>x</b>'"):
        agent.instruction("<b>x</b>", "be brief")


@pytest.mark.parametrize("indent", [None, 2])
def test_a_truncated_document_is_said_truncated_where_it_stops_not_on_line_1(
    tmp_path: Path, indent: int | None
) -> None:
    path = tmp_path / "session.json"
    text = json.dumps({"messages": HISTORY * 3}, indent=indent)
    path.write_text(text[: len(text) // 2] + "\n")
    stops = text[: len(text) // 2].rstrip().count("\n") + 1  # its last line with text
    with pytest.raises(MessageFormatError, match=rf"ends before .* \(line {stops}: .*truncated"):
        load(path)


def test_a_json_lines_session_cut_off_in_its_last_line_loads_the_rest_and_says_so(
    tmp_path: Path,
) -> None:
    lines = [json.dumps(m) for m in HISTORY * 2]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[0][:-9])
    transcript = load(path)
    assert len(transcript.messages) == 4
    census = added_up(transcript)
    assert census.read["line cut off"] == 1 and sum(census.read.values()) == 5
    assert transcript.meta["cut_line"] == 5
    # A last line that is not JSON, but not cut short either, is a damaged line: skipped and
    # named as such, not as cut off.
    path.write_text("\n".join(lines) + "\n{oops\n")
    transcript = load(path)
    assert len(transcript.messages) == 4 and "cut_line" not in transcript.meta
    assert transcript.meta["lines_not_json"] == [
        {"line": 5, "reason": "Expecting property name enclosed in double quotes"}
    ]
    assert transcript.census is not None and transcript.census.skipped == {"line 5 not JSON": 1}


def test_gemini_stream_json_is_read_as_its_own_format_not_guessed(tmp_path: Path) -> None:
    # Its lines have role fields: taken for Anthropic messages they failed on a detail.
    init = {"type": "init", "timestamp": "t", "session_id": "s", "model": "gemini-2.5-pro"}
    said = {"type": "message", "timestamp": "t", "role": "user", "content": "hi"}
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(init) + "\n" + json.dumps(said) + "\n")
    transcript = load(path)
    assert transcript.meta["source"] == "gemini_stream"
    assert [(m.role, m.content[0].text) for m in transcript.messages] == [("user", "hi")]


def test_a_letta_agent_file_is_not_read_as_openai(tmp_path: Path) -> None:
    # Read as Letta's: a history that opens with the agent's own call has no request to replay,
    # said with what was read and skipped — never loaded as OpenAI and refused by the replay.
    agent = {
        "agent_type": "memgpt_agent",
        "llm_config": {"model": "gpt-4o-mini"},
        "in_context_message_indices": [0, 1],
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "send_message"}}],
            },
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ],
    }
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(agent))
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), "no messages", "opening reply before any user message")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # aider's LLM log is read now: one holding no message says so.
        ("TO LLM 2025-01-01T10:00:00\n-------\nSYSTEM hi\n", "no messages"),
    ],
)
def test_a_text_format_recognised_but_not_read_is_named(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "history.md"
    path.write_text(text)
    with pytest.raises(MessageFormatError, match=said):
        load(path)


def test_cannot_tell_names_the_formats_it_considered_and_how_to_force_one(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"what": "is this", "when": 1}))
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    said = str(caught.value)
    assert "an object with keys 'what', 'when'" in said and "pass format=" in said
    assert all(name in said for name in FORMATS)


def test_an_episode_of_a_one_conversation_file_is_refused_saying_so() -> None:
    with pytest.raises(MessageFormatError, match="holds one conversation"):
        load(HISTORY, format="anthropic", episode=2)
