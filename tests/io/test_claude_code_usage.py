"""Claude Code usage, response by response, against the file: every output token the file
holds is read. Claude Code writes one line per content block, each with the response's usage
so far; only the last carries the whole output. The independent count here is a parser of its
own (no ctxlab code): per (message id, request id), the line with the most output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io import load
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import AssistantMessage
from tests.conftest import requires_corpus

FIXTURE = Path(__file__).parents[1] / "fixtures" / "claude_code"
SESSION = FIXTURE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def main_replies(path: Path) -> list[tuple[tuple[Any, Any], dict[str, Any]]]:
    """The file's assistant lines of the main thread (a subagent's own file is all sidechain
    lines: then those), each with its response's key (message id, request id)."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    talk = [r for r in records if r.get("type") in ("user", "assistant")]
    sidechain_file = bool(talk) and all(r.get("isSidechain") for r in talk)
    return [
        ((r["message"].get("id"), r.get("requestId")), r)
        for r in records
        if r.get("type") == "assistant" and (sidechain_file or not r.get("isSidechain"))
    ]


def file_bill(path: Path) -> list[tuple[int, ...]]:
    """The file's own bill, response by response in order of first line: the usage of the
    line with the most output (the main thread's lines; a subagent's own file is all
    sidechain lines, and then those)."""
    best: dict[tuple[str, str], tuple[int, ...]] = {}
    for key, record in main_replies(path):
        message = record["message"]
        usage = tuple(int(message["usage"].get(k) or 0) for k in KEYS)
        if key not in best or usage[1] >= best[key][1]:
            best[key] = usage
    return list(best.values())


def loaded_bill(path: Path, **options: Any) -> list[tuple[int, ...]]:
    transcript = load(path, **options)
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    return [
        (u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens)
        for i in replies
        if (u := transcript.usage.get(i)) is not None
    ]


def test_every_responses_final_usage_is_read_from_a_real_session() -> None:
    expected = file_bill(SESSION)
    assert loaded_bill(SESSION) == expected
    # The figures that mattered: 20 responses, their whole output (their first lines hold 102).
    assert len(expected) == 20
    assert sum(u[1] for u in expected) == 3_344


def test_a_subagents_own_file_is_read_whole_with_its_usage() -> None:
    agent = FIXTURE / SESSION.stem / "subagents" / "agent-aac57f5.jsonl"
    assert loaded_bill(agent) == file_bill(agent)
    assert loaded_bill(SESSION, episode=1) == file_bill(agent)


@requires_corpus
def test_every_real_claude_code_file_reads_its_whole_bill() -> None:
    folder = corpus_dir() / "raw" / "claude_code"
    paths = sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/agent-*.jsonl"))
    assert len(paths) >= 15
    for path in paths:
        assert loaded_bill(path) == file_bill(path), path.name


def _lines(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session of ``responses`` (blocks, final usage, how many lines), written as Claude Code
    writes it: a user prompt, then each response's blocks one line each, the output growing to
    its final count on the last line (an empty text line may close it), each call's result
    right after the response."""
    lines: list[dict[str, Any]] = [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "go"}}
    ]
    for n, response in enumerate(responses):
        final = response["usage"]
        blocks = [{"type": "text", "text": f"step {n} part {k}"} for k in range(response["parts"])]
        blocks.append({"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {}})
        if response["empty_last"]:
            blocks.append({"type": "text", "text": "\n\n"})
        for k, block in enumerate(blocks):
            last = k == len(blocks) - 1
            output = final[1] if last else min(k + 1, final[1])
            usage = dict(zip(KEYS, (final[0], output, final[2], final[3]), strict=True))
            message = {
                "role": "assistant",
                "id": f"msg_{n}",
                "model": "claude-opus-4-6",
                "content": [block],
                "usage": usage,
            }
            lines.append(
                {"type": "assistant", "sessionId": "s", "requestId": f"req_{n}", "message": message}
            )
        lines.append(
            {
                "type": "user",
                "sessionId": "s",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok"}
                    ],
                },
            }
        )
    return lines


counts = st.integers(min_value=0, max_value=50_000)
response = st.fixed_dictionaries(
    {
        "usage": st.tuples(counts, counts, counts, counts),
        "parts": st.integers(min_value=0, max_value=4),
        "empty_last": st.booleans(),
    }
)


@settings(max_examples=40, deadline=None)
@given(responses=st.lists(response, min_size=1, max_size=6))
def test_generated_sessions_bill_what_they_were_built_with(
    tmp_path_factory: pytest.TempPathFactory, responses: list[dict[str, Any]]
) -> None:
    path = tmp_path_factory.mktemp("cc") / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in _lines(responses)) + "\n")
    # A response that counts no token (Claude Code's synthetic replies) is no bill.
    assert loaded_bill(path) == [tuple(r["usage"]) for r in responses if any(r["usage"])]


def _reply(text: str, message_id: str, output: int, request: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "assistant",
        "sessionId": "s",
        "message": {
            "role": "assistant",
            "id": message_id,
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": output},
        },
    }
    if request is not None:
        line["requestId"] = request
    return line


def _prompt(text: str) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}


def test_a_duplicate_message_id_does_not_reorder_replies(tmp_path: Path) -> None:
    # The same message id on a later reply (no request id to tell them apart), a user prompt in
    # between: the later reply stays in its place, with its own usage.
    lines = [
        _prompt("first question"),
        _reply("first answer", "msg_same", 7),
        _prompt("second question"),
        _reply("second answer", "msg_same", 11),
        _prompt("third question"),
        _reply("third answer", "msg_other", 13),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    transcript = load(path)
    texts = [b.text for m in transcript.messages for b in m.content]  # type: ignore[union-attr]
    assert texts == [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
        "third answer",
    ]
    assert [u.output_tokens for _, u in sorted(transcript.usage.items())] == [7, 11, 13]


def test_a_response_split_around_its_own_results_stays_one_reply(tmp_path: Path) -> None:
    # What real files hold: a response's first call, its result, then the response's next
    # call (same id and request): one reply, its final usage read from its last line.
    call = {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}}
    second = {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {}}
    first_line = _reply("x", "msg_1", 3, "req_1")
    first_line["message"]["content"] = [call]
    next_line = _reply("x", "msg_1", 90, "req_1")
    next_line["message"]["content"] = [second]
    result = {
        "type": "user",
        "sessionId": "s",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "a"}],
        },
    }
    other = {
        **result,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": "b"}],
        },
    }
    lines = [_prompt("read both"), first_line, result, next_line, other, _reply("done", "msg_2", 5)]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    transcript = load(path)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert [b.id for b in transcript.messages[1].tool_uses] == ["toolu_a", "toolu_b"]  # type: ignore[union-attr]
    assert [u.output_tokens for _, u in sorted(transcript.usage.items())] == [90, 5]
