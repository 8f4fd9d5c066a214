"""Claude Code's lines, each kind read as the module promises, on a session written here line
by line: which lines make it a Claude Code file, the compaction records (``compact_boundary``,
``microcompact_boundary``, a summary with or without its boundary), the models and each reply's
model, what is skipped and under which name, sidechain lines, plain ``{role, content}`` lines,
and each response's usage — the line with the most output, the later on a tie."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.claude_code.parse import is_claude_code_line

SID = "5e551011-0000-4000-8000-000000000001"


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": SID,
        "message": {"role": "user", "content": content},
        **extra,
    }


def _reply(
    mid: str,
    blocks: list[dict[str, Any]],
    output: int,
    model: str = "claude-opus-4-6",
    request: str = "req",
    input_tokens: int = 100,
    **extra: Any,
) -> dict[str, Any]:
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": output,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    message = {"id": mid, "role": "assistant", "model": model, "content": blocks, "usage": usage}
    return {
        "type": "assistant",
        "sessionId": SID,
        "requestId": request,
        "message": message,
        **extra,
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _load(tmp_path: Path, lines: list[dict[str, Any]], **options: Any) -> Transcript:
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return load(path, **options)


SUMMARY = "This session is being continued from a previous conversation that ran out of context."


def _session() -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    return [
        {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}},
        {"type": "progress", "sessionId": SID, "data": {"type": "hook_progress"}},
        {"type": "progress", "sessionId": SID, "data": {}},
        _user("list the files"),
        _reply("msg_1", [_text("Listing.")], 3),
        _reply("msg_1", [call], 9),  # the same response: its last line has the whole output
        _reply("msg_1", [], 2),  # an empty line with less output: not the response's usage
        _user([result]),
        _reply("msg_2", [_text("One file.")], 5, model="claude-haiku-4-5"),
        {"type": "system", "sessionId": SID, "subtype": "turn_duration"},
        {"type": "system", "sessionId": SID},
        {
            "type": "system",
            "sessionId": SID,
            "subtype": "compact_boundary",
            "compactMetadata": {"trigger": "auto", "preTokens": 167_094},
        },
        _user(SUMMARY + " Summary: files listed.", isCompactSummary=True),
        _reply("msg_3", [_text("Continuing.")], 4),
        {
            "type": "system",
            "sessionId": SID,
            "subtype": "microcompact_boundary",
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": 50_000,
                "tokensSaved": 12_000,
                "compactedToolIds": ["toolu_1", 7],
            },
        },
        _user("and now?", isSidechain=True),
        {"type": "queue-operation", "sessionId": SID, "operation": "enqueue"},
        {"type": "assistant", "sessionId": SID, "message": "not an object"},
        {"role": "user", "content": "a line another tool appended"},
        {"role": "user", "content": "and another"},
        _reply("msg_4", [_text("   ")], 2),  # nothing kept, and no other line: its usage lost
        _user([]),
        {"type": "attachment"},  # no session id: another tool's line
        {"sessionId": SID},
        _user("thanks"),
        _reply("msg_5", [_text("Done.")], 6, model="claude-opus-4-6"),
    ]


def test_each_kind_of_line_is_read_counted_and_skipped_by_name(tmp_path: Path) -> None:
    transcript = _load(tmp_path, _session())
    census = transcript.census
    assert census is not None
    assert census.read == {
        "file-history-snapshot": 1,
        "progress hook_progress": 1,
        "progress": 1,
        "user": 5,
        "assistant": 8,
        "system": 4,
        "queue-operation": 1,
        "attachment": 1,
        "line of an unknown shape": 3,
        "subagent line": 1,
    }
    assert transcript.meta["skipped"] == {
        "file-history-snapshot": 1,
        "progress hook_progress": 1,
        "progress": 1,
        "system turn_duration": 1,
        "system line": 1,
        "subagent line": 1,  # the sidechain line: a subagent's (episode 1)
        "queue-operation": 1,
        "assistant line without a message object": 1,
        "empty reply line": 1,
        "empty user message": 1,
        "line of another tool": 2,
    }
    assert census.adds_up
    assert transcript.meta["plain_message_lines"] == 2
    texts = [[getattr(b, "text", None) for b in m.content] for m in transcript.messages]
    # The plain line is a user message (merged with the next); the empty one adds nothing.
    assert texts[-2:] == [["a line another tool appended", "and another", "thanks"], ["Done."]]
    assert not any("and now?" in str(t) for t in texts)  # the sidechain line is left out


def test_sidechain_lines_are_read_when_asked(tmp_path: Path) -> None:
    transcript = _load(tmp_path, _session(), sidechains=True)
    assert "subagent line" not in transcript.meta["skipped"]
    said = [getattr(b, "text", None) for m in transcript.messages for b in m.content]
    assert "and now?" in said


def test_compactions_are_recorded_with_their_figures_and_place(tmp_path: Path) -> None:
    compactions = _load(tmp_path, _session()).meta["compactions"]
    assert compactions[0] == {
        "kind": "compact",
        "trigger": "auto",
        "pre_tokens": 167_094,
        "replies_before": 2,
        "summary_head": (SUMMARY + " Summary: files listed.")[:200],
        "summary_index": 4,
        "summary_block": 0,
    }
    micro = {k: v for k, v in compactions[1].items() if k not in ("summary_index", "summary_block")}
    assert micro == {
        "kind": "microcompact",
        "trigger": "auto",
        "pre_tokens": 50_000,
        "tokens_saved": 12_000,
        "tool_ids": ["toolu_1", "7"],
        "replies_before": 3,
    }
    assert len(compactions) == 2


def test_a_summary_without_its_boundary_is_a_compaction_of_its_own(tmp_path: Path) -> None:
    head = "x" * 300
    lines = [
        _user("hi"),
        _reply("msg_1", [_text("hello")], 2),
        _user(head, isCompactSummary=True),
        _reply("msg_2", [_text("on")], 2),
        _user("second summary", isCompactSummary=True),  # after one already summarized
        _reply("msg_3", [_text("on again")], 2),
    ]
    compactions = _load(tmp_path, lines).meta["compactions"]
    assert [
        (c["kind"], c["trigger"], c["pre_tokens"], c["replies_before"]) for c in compactions
    ] == [
        ("compact", None, None, 1),
        ("compact", None, None, 2),
    ]
    assert [c["summary_head"] for c in compactions] == ["x" * 200, "second summary"]


def test_the_models_in_order_of_first_use_and_each_replys_model(tmp_path: Path) -> None:
    meta = _load(tmp_path, _session()).meta
    assert meta["models"] == ["claude-opus-4-6", "claude-haiku-4-5"]
    # By the reply's rank (the empty reply kept nothing: no rank).
    assert meta["reply_models"] == {
        "0": "claude-opus-4-6",
        "1": "claude-haiku-4-5",
        "2": "claude-opus-4-6",
        "3": "claude-opus-4-6",
    }
    assert meta["session_id"] == SID


def test_each_response_takes_the_usage_of_its_line_with_the_most_output(tmp_path: Path) -> None:
    transcript = _load(tmp_path, _session())
    replies = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    outputs = [transcript.usage[i].output_tokens for i in replies]
    assert outputs == [9, 5, 4, 6]
    census = transcript.census
    assert census is not None
    # msg_4 kept no block: its usage was read, and lost for it.
    assert (census.usage_read, census.usage_placed) == (5, 4)
    assert census.usage_lost == {"on a reply with nothing kept": 1}


def test_of_two_lines_with_equal_output_the_later_usage_stands(tmp_path: Path) -> None:
    lines = [
        _user("hi"),
        _reply("msg_1", [_text("a")], 5, input_tokens=100),
        _reply("msg_1", [_text("b")], 5, input_tokens=120),
        _reply("msg_1", [_text("c")], 4, input_tokens=130),  # less output: not the final line
    ]
    transcript = _load(tmp_path, lines)
    usage = transcript.usage[1]
    assert (usage.input_tokens, usage.output_tokens) == (120, 5)


def test_a_reused_message_id_after_a_user_message_is_a_reply_with_its_own_usage(
    tmp_path: Path,
) -> None:
    lines = [
        _user("hi"),
        _reply("msg_1", [_text("first")], 7),
        _user("again"),
        _reply("msg_1", [_text("retried")], 3),  # same id and request: a copy, not more blocks
    ]
    transcript = _load(tmp_path, lines)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert [transcript.usage[i].output_tokens for i in (1, 3)] == [7, 3]
    census = transcript.census
    assert census is not None and (census.usage_read, census.usage_placed) == (2, 2)
    # Reused two replies later: a reply of its own too, not more blocks of the first.
    later = _load(
        tmp_path,
        [*lines[:2], _user("x"), _reply("msg_2", [_text("second")], 4), _user("y"), lines[3]],
    )
    said = [[getattr(b, "text", None) for b in m.content] for m in later.messages]
    assert said == [["hi"], ["first"], ["x"], ["second"], ["y"], ["retried"]]


def test_replies_merged_in_one_turn_count_the_earlier_usage_as_replaced(tmp_path: Path) -> None:
    lines = [
        _user("hi"),
        _reply("msg_1", [_text("one")], 7),
        _reply("msg_2", [_text("two")], 3),  # another response, no user turn between
    ]
    transcript = _load(tmp_path, lines)
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert transcript.usage[1].output_tokens == 3
    census = transcript.census
    assert census is not None
    assert (census.usage_read, census.usage_placed) == (2, 1)
    assert census.usage_lost == {"replaced: replies merged in a turn": 1}


def test_a_response_continues_across_the_results_of_its_own_calls(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    lines = [
        _user("hi"),
        _reply("msg_1", [call], 3),
        _user([result]),
        _reply("msg_1", [_text("and more")], 8),  # its first call's result came between
    ]
    joined = _load(tmp_path, lines)
    assert [m.role for m in joined.messages] == ["user", "assistant", "user"]
    assert [b.type for b in joined.messages[1].content] == ["tool_use", "text"]
    assert joined.usage[1].output_tokens == 8
    # A user's words between: the reused id cannot continue its reply, it is one of its own.
    apart = _load(tmp_path, [*lines[:3], _user("a word"), lines[3]])
    assert [m.role for m in apart.messages] == ["user", "assistant", "user", "assistant"]
    assert [b.type for b in apart.messages[1].content] == ["tool_use"]
    assert [apart.usage[i].output_tokens for i in (1, 3)] == [3, 8]
    # A result of another response's call between: the same.
    stray = {"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}
    other = _load(tmp_path, [*lines[:2], _user([result, stray]), lines[3]])
    assert [m.role for m in other.messages][-1] == "assistant"
    assert [b.type for b in other.messages[1].content] == ["tool_use"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"type": "file-history-snapshot", "messageId": "m"}, True),
        ({"type": "summary", "leafUuid": "u", "summary": "s"}, True),
        ({"type": "user", "sessionId": "s"}, True),
        ({"type": "summary", "summary": "s"}, False),  # none of Claude Code's ids
        ({"type": "queue-operation", "sessionId": "s"}, True),
        ({"type": "custom-title", "sessionId": "s", "role": "user"}, False),  # a chat message
        ({"type": "custom-title", "sessionId": 7}, False),
        ({"type": 3, "sessionId": "s"}, False),
        (["user"], False),
    ],
)
def test_a_claude_code_line_is_known_by_its_ids(line: Any, expected: bool) -> None:
    assert is_claude_code_line(line) is expected


def test_a_file_known_only_by_its_snapshot_and_summary_ids_loads_as_claude_code(
    tmp_path: Path,
) -> None:
    # A subagent's message lines carry no session id: the file is known by its other lines.
    lines = [
        {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}},
        {"type": "summary", "leafUuid": "u0", "summary": "earlier"},
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": "hello"}},
    ]
    transcript = _load(tmp_path, lines)
    assert transcript.meta["source"] == "claude_code"
    assert [m.role for m in transcript.messages] == ["user", "assistant"]


def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    from ctxlab.exceptions import MessageFormatError

    bad_usage = _reply("msg_1", [_text("hello")], -3)
    with pytest.raises(MessageFormatError, match=rf"{SID}\.jsonl line 2: .*output_tokens"):
        _load(tmp_path, [_user("hi"), bad_usage])
    with pytest.raises(MessageFormatError, match=rf"{SID}\.jsonl line 2: not a JSON object"):
        _load(tmp_path, [_user("hi"), [1, 2], _reply("msg_1", [_text("hello")], 3)])  # type: ignore[list-item]


def test_the_census_counts_lines(tmp_path: Path) -> None:
    census = _load(tmp_path, _session()).census
    assert census is not None and census.unit == "line"
    assert str(census).startswith(f"read {len(_session())} lines: ")  # every line written
