"""Claude Code subagents as conversations of their own: sidechain lines and agent_progress
lines grouped by the Task call, the main thread keeping the Task's real result, a subagent's
own file, and every other line counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import load
from ctxlab.messages import find_tool_pair_problems


def _line(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(
            id=extra.pop("mid", "msg_x"),
            model="claude-sonnet-4-5",
            usage={"input_tokens": 10, "output_tokens": 5},
        )
    return {
        "type": kind,
        "sessionId": "s1",
        "uuid": extra.pop("uuid", "u"),
        "message": message,
        **extra,
    }


def _said(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _result(call_id: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text}]


def _jsonl(path: Path, lines: list[Any]) -> Path:
    """``lines`` written to ``path`` as JSON lines."""
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _session(tmp_path: Path) -> Path:
    task = {
        "type": "tool_use",
        "id": "toolu_task",
        "name": "Task",
        "input": {"prompt": "Find the config loader"},
    }
    lines = [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s1", "timestamp": "t"},
        _line("user", "Refactor the config loader", uuid="u1"),
        _line("assistant", [task], mid="m1", uuid="a1"),
        # The subagent, as sidechain lines (its own conversation, under its agent id).
        _line("user", "Find the config loader", uuid="s1", isSidechain=True, agentId="ag1"),
        _line(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_grep",
                    "name": "Grep",
                    "input": {"pattern": "load_config"},
                }
            ],
            mid="m2",
            uuid="s2",
            isSidechain=True,
            agentId="ag1",
        ),
        _line(
            "user",
            _result("toolu_grep", "src/config.py:12"),
            uuid="s3",
            isSidechain=True,
            agentId="ag1",
        ),
        _line(
            "assistant",
            _said("It is in src/config.py."),
            mid="m3",
            uuid="s4",
            isSidechain=True,
            agentId="ag1",
        ),
        {
            "type": "attachment",
            "sessionId": "s1",
            "attachment": {"type": "file", "content": "x" * 500},
        },
        # The Task's real result in the main thread.
        _line(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_task",
                    "content": "It is in src/config.py.",
                }
            ],
            uuid="u2",
            toolUseResult={"status": "completed", "agentId": "ag1"},
        ),
        _line("assistant", _said("Found it; refactoring."), mid="m4", uuid="a2"),
    ]
    return _jsonl(tmp_path / "session.jsonl", lines)


def test_the_main_thread_keeps_the_tasks_real_result_and_lists_its_subagent(tmp_path: Path) -> None:
    transcript = load(_session(tmp_path))
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    (result,) = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert (result.tool_use_id, result.text) == ("toolu_task", "It is in src/config.py.")
    assert not result.is_error  # the real result, not "No result was recorded"
    # The parent's Task call points at its subagent (the result names the agent).
    assert transcript.meta["subagents"] == [
        {"episode": 1, "task_call_id": "toolu_task", "agent_id": "ag1", "kind": "task", "lines": 4}
    ]
    assert transcript.meta["skipped"] == {"queue-operation": 1, "attachment": 1, "subagent line": 4}
    assert "repairs" not in transcript.meta


def test_a_subagent_opens_as_its_own_conversation(tmp_path: Path) -> None:
    agent = load(_session(tmp_path), episode=1)
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[0].content[0].text == "Find the config loader"  # type: ignore[union-attr]
    assert agent.messages[1].tool_uses[0].name == "Grep"  # type: ignore[union-attr]
    assert find_tool_pair_problems(agent.messages) == []
    assert agent.meta["subagent_of"] == "s1" and agent.name == "session#1"
    assert agent.meta["subagent"]["task_call_id"] == "toolu_task"
    assert sorted(agent.usage) == [1, 3]  # its own requests, its own bill
    with pytest.raises(MessageFormatError, match=r"no subagent 2 .*has 1; episode 0 is the main"):
        load(_session(tmp_path), episode=2)


def test_a_subagents_own_file_loads_as_its_conversation(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in _session(tmp_path).read_text().splitlines()]
    alone = tmp_path / "agent-ag1.jsonl"
    alone.write_text("\n".join(json.dumps(r) for r in lines if r.get("isSidechain")) + "\n")
    transcript = load(alone)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert transcript.messages[-1].content[0].text == "It is in src/config.py."  # type: ignore[union-attr]


def test_a_reply_reusing_a_message_id_under_another_request_keeps_its_place_and_usage(
    tmp_path: Path,
) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    lines = [
        _line("user", "list the files", uuid="u1"),
        _line("assistant", [call], mid="msg_same", uuid="a1", requestId="req_1"),
        _line("user", _result("toolu_1", "a.py"), uuid="u2"),
        # A retried request's reply that came back with the same message id.
        _line("assistant", _said("There is a.py."), mid="msg_same", uuid="a2", requestId="req_2"),
        # A plain {role, content} line a tool appended among Claude Code's lines.
        {"role": "user", "content": "thanks"},
        _line("assistant", _said("You're welcome."), mid="msg_3", uuid="a3", requestId="req_3"),
    ]
    transcript = load(_jsonl(tmp_path / "session.jsonl", lines))
    texts = [(m.role, [getattr(b, "text", b.type) for b in m.content]) for m in transcript.messages]
    assert texts == [
        ("user", ["list the files"]),
        ("assistant", ["tool_use"]),
        ("user", ["a.py"]),
        ("assistant", ["There is a.py."]),
        ("user", ["thanks"]),
        ("assistant", ["You're welcome."]),
    ]
    assert sorted(transcript.usage) == [1, 3, 5]  # the second reply keeps its own usage
    assert transcript.meta["plain_message_lines"] == 1


def _parallel(tmp_path: Path) -> Path:
    # Two subagents run at once, their sidechain lines interleaved, with no agentId (older
    # Claude Code): each hangs from its own prompt by parentUuid.
    def side(kind: str, content: Any, uuid: str, parent: str | None, **extra: Any) -> Any:
        return _line(kind, content, uuid=uuid, parentUuid=parent, isSidechain=True, **extra)

    def call(cid: str, pattern: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": cid, "name": "Grep", "input": {"pattern": pattern}}

    lines = [
        _line("user", "Find the loader and the writer", uuid="u1"),
        side("user", "Find the loader", "a1", None),
        side("user", "Find the writer", "b1", None),
        side("assistant", [call("ga", "load")], "a2", "a1", mid="ma1"),
        side("assistant", [call("gb", "write")], "b2", "b1", mid="mb1"),
        side("user", _result("gb", "src/w.py:3"), "b3", "b2"),
        side("user", _result("ga", "src/l.py:9"), "a3", "a2"),
        side("assistant", _said("The writer is in src/w.py."), "b4", "b3", mid="mb2"),
        side("assistant", _said("The loader is in src/l.py."), "a4", "a3", mid="ma2"),
        _line("assistant", _said("Both found."), mid="m9", uuid="u9"),
    ]
    return _jsonl(tmp_path / "parallel.jsonl", lines)


def test_parallel_subagents_without_agent_ids_are_not_spliced_into_one(tmp_path: Path) -> None:
    path = _parallel(tmp_path)
    main = load(path)
    assert [e["lines"] for e in main.meta["subagents"]] == [4, 4]
    texts = []
    for episode in (1, 2):
        agent = load(path, episode=episode)
        assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
        assert find_tool_pair_problems(agent.messages) == []
        texts.append([getattr(b, "text", "") for m in agent.messages for b in m.content])
    assert texts[0][0] == "Find the loader" and texts[0][-1] == "The loader is in src/l.py."
    assert texts[1][0] == "Find the writer" and texts[1][-1] == "The writer is in src/w.py."


def _newer_layout(tmp_path: Path) -> Path:
    # Claude Code 2.1 and later: the session file holds no subagent line; each subagent is
    # <session>/subagents/agent-<id>.jsonl (every line isSidechain, with its agentId), with
    # agent-<id>.meta.json naming the call that started it.
    task = {"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"prompt": "look"}}
    session = tmp_path / "s1.jsonl"
    lines = [
        _line("user", "Look around", uuid="u1"),
        _line("assistant", [task], mid="m1", uuid="a1"),
        _line("user", _result("toolu_t", "Looked."), uuid="u2"),
        _line("assistant", _said("Done."), mid="m2", uuid="a2"),
    ]
    _jsonl(session, lines)
    folder = tmp_path / "s1" / "subagents"
    folder.mkdir(parents=True)
    agent = [
        _line("user", "look", uuid="x1", isSidechain=True, agentId="abc"),
        _line("assistant", _said("Looked."), mid="mx", uuid="x2", isSidechain=True, agentId="abc"),
    ]
    agent[1]["message"]["usage"] = {"input_tokens": 900, "output_tokens": 40}
    _jsonl(folder / "agent-abc.jsonl", agent)
    (folder / "agent-abc.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "look", "toolUseId": "toolu_t"})
    )
    return session


def test_a_subagents_own_file_beside_the_session_is_its_episode(tmp_path: Path) -> None:
    session = _newer_layout(tmp_path)
    main = load(session)
    (entry,) = main.meta["subagents"]
    assert entry["task_call_id"] == "toolu_t" and entry["agent_id"] == "abc"
    assert entry["agent_type"] == "Explore" and entry["file"].endswith("agent-abc.jsonl")
    agent = load(session, episode=1)
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    (usage,) = agent.usage.values()
    assert (usage.input_tokens, usage.output_tokens) == (900, 40)
    assert sorted(u.input_tokens for u in main.usage.values()) == [10, 10]  # the parent's own


def test_sessions_lists_each_subagent_apart(tmp_path: Path) -> None:
    from ctxlab.io import sessions

    _newer_layout(tmp_path)
    _parallel(tmp_path)
    rows = sessions(tmp_path, progress=False, workers=1)
    listed = {
        (
            r["name"],
            r["episode"],
            r["subagent_of"] if isinstance(r["subagent_of"], str) else None,
            r["requests"],
        )
        for _, r in rows.iterrows()
    }
    assert listed == {
        ("s1", 0, None, 2),
        ("agent-abc", 0, "s1", 1),  # its own file, saying whose it is
        ("parallel", 0, None, 1),
        ("parallel#1", 1, "s1", 2),  # held in the session's file: a row of that file
        ("parallel#2", 2, "s1", 2),
    }
