"""Defects found by hostile inputs (issue 10), each reproduced here before its fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, SessionLog
from ctxlab.agent import Agent
from ctxlab.exceptions import CtxlabError, InvalidConversation
from ctxlab.models import ScriptedModel, tool_call


def agent_with(tool: object, replies: list[object], **kwargs: object) -> Agent:
    return Agent(
        model=ScriptedModel(replies),
        tools=[tool],  # type: ignore[list-item]
        counter=ApproximateCounter(),
        **kwargs,  # type: ignore[arg-type]
    )


async def test_undecodable_tool_output_is_replaced_noted_and_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    try:
        (folder / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses non-UTF-8 names")

    def list_files() -> str:
        """List the folder."""
        return "\n".join(os.listdir(folder))  # a surrogate escape: 'caf\udce9.txt'

    def raw_bytes() -> bytes:
        """A subprocess's raw output."""
        return b"ok \xff\xfe done"

    log = SessionLog(tmp_path / "log.sqlite")
    replies = [tool_call("list_files"), tool_call("raw_bytes"), "seen", "again"]
    agent = Agent(
        model=ScriptedModel(replies),
        tools=[list_files, raw_bytes],
        counter=ApproximateCounter(),
        session_log=log,
    )
    await agent("list them")
    results = [
        r.text for m in agent.history if m.role == "user" for r in getattr(m, "tool_results", ())
    ]
    assert results[0].startswith("[ctxlab: 1 undecodable bytes") and "caf\ufffd.txt" in results[0]
    assert (
        results[1].startswith("[ctxlab: 2 undecodable bytes")
        and "ok \ufffd\ufffd done" in results[1]
    )
    kinds = [t.kind for m in agent.manifests for t in m.transforms]
    assert kinds.count("tool_output_decoded") == 2
    json.dumps(agent.history[-1].model_dump(mode="json"))  # serializes
    assert (await agent("and now?")).content[0].text == "again"  # type: ignore[union-attr]


def test_no_text_can_break_serialization() -> None:
    from ctxlab.messages import ToolResultBlock, ToolUseBlock, UserMessage

    for text in ("x\ud800y", "caf\udce9", "\udfff", "ok"):
        message = UserMessage(content=text)
        message.model_dump_json()
        ToolResultBlock(tool_use_id=text, content=text).model_dump_json()
        ToolUseBlock(id="a", name="t", input={"k": [text, {text: text}]}).model_dump_json()


async def test_an_empty_user_message_is_refused_like_an_empty_string() -> None:
    def noop() -> str:
        """Nothing."""
        return ""

    agent = agent_with(noop, ["ok"])
    with pytest.raises(InvalidConversation, match="empty"):
        await agent({"role": "user", "content": []})
    assert agent.history == ()
    assert (await agent("hello")).content[0].text == "ok"  # type: ignore[union-attr]


def test_error_classes_are_typed() -> None:
    assert issubclass(InvalidConversation, CtxlabError)


async def test_a_log_damaged_past_its_header_gives_a_typed_error_and_stays_untouched(
    tmp_path: Path,
) -> None:
    from ctxlab.exceptions import SessionLogError

    path = tmp_path / "log.sqlite"
    log = SessionLog(path)
    agent = Agent(model=ScriptedModel(["one", "two"]), session_log=log, session_id="s")
    await agent("first " * 2000)
    await agent("second " * 2000)
    log.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    data[2 * 4096 :] = b"\x13" * (len(data) - 2 * 4096)  # the header page survives
    path.write_bytes(bytes(data))
    with pytest.raises(SessionLogError) as caught:
        damaged = SessionLog(path)
        Agent(model=ScriptedModel([]), session_log=damaged, session_id="s")
    assert str(path) in str(caught.value) and "another file" in str(caught.value)
    assert path.read_bytes() == bytes(data)
