"""OpenHands completion logs of both versions (``ctxlab/io/formats/openhands/logs.py``): V0 logs laid out
as V0's ``llm.py`` writes them (tests/fixtures/openhands/v0, made from real calls) keep every tool
call of ``fncall_messages`` with its result and the reply's usage — checked against the test's own
reading of the file —; V0 and V1 detection never claim each other's logs (on the fixtures and on
logs generated from each version's writer); a reply's reasoning is kept as thinking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io._detect import detect_format
from ctxlab.io.formats.openhands.logs import V0_KEYS, V1_KEYS, is_v0_log, is_v1_log
from ctxlab.messages import ProviderUsage, find_tool_pair_problems
from tests.io.shown import added_up, shown
from tests.strategies import SETTINGS, json_value

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openhands"
V0 = sorted((FIXTURES / "v0" / "llm_completions").glob("*/*.json"))
V1 = sorted((FIXTURES / "v1" / "logs").glob("*.json"))
PROMPTED = next(p for p in V0 if "deepseek" in p.name)
NATIVE = next(p for p in V0 if "claude" in p.name)


def _calls(messages: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or ()]


def test_a_v0_log_of_prompted_calls_keeps_every_call_with_its_result() -> None:
    log = json.loads(PROMPTED.read_text())
    transcript = load(PROMPTED)
    # The test's own reading: the calls of fncall_messages and of fncall_response's reply, in
    # order, each a tool_use; each tool message a result of its call, with its text.
    reply = log["fncall_response"]["choices"][0]["message"]
    calls = _calls([*log["fncall_messages"], reply])
    assert len(calls) == 4
    uses = [u.id for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert uses == calls
    results = {
        r.tool_use_id: r.text for m in transcript.messages for r in getattr(m, "tool_results", ())
    }
    for message in log["fncall_messages"]:
        if message["role"] == "tool":
            assert results[message["tool_call_id"]] == message["content"]
    assert find_tool_pair_problems(transcript.messages) == []
    # The reply carries the response's usage (prompt tokens hold the cached ones).
    usage = log["fncall_response"]["usage"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    last = max(i for i, m in enumerate(transcript.messages) if m.role == "assistant")
    assert transcript.usage == {
        last: ProviderUsage(usage["prompt_tokens"] - cached, usage["completion_tokens"], cached)
    }
    # The System text the model read is the text rendering's (with the tools described in it);
    # the tools were not sent as schemas. The rest of that rendering is counted, not kept.
    assert transcript.system == log["messages"][0]["content"] and transcript.tools == ()
    meta = transcript.meta
    assert (meta["version"], meta["function_calling"]) == (0, "prompted")
    census = transcript.census
    assert census is not None and census.adds_up and census.unaccounted == {}
    roles = [m["role"] for m in log["fncall_messages"]]
    assert census.read == {
        "user message": roles.count("user"),
        "assistant message": roles.count("assistant") + 1,  # and the reply
        "tool message": roles.count("tool"),
        "system message without the tools' descriptions": 1,
        "system message as the model read it": 1,
        "message as the model read it": len(log["messages"]) - 1,
        "response as the model wrote it": 1,
    }
    assert census.skipped == {
        "the System text the model read is the text rendering's": 1,
        "the same turn as the model read it (prompted function calling)": len(log["messages"]) - 1,
        "the same reply as the model wrote it (prompted function calling)": 1,
    }


def test_a_v0_log_of_native_calls_keeps_its_calls_tools_and_usage() -> None:
    log = json.loads(NATIVE.read_text())
    transcript = load(NATIVE)
    reply = log["response"]["choices"][0]["message"]
    uses = [u.id for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert uses == _calls([*log["messages"], reply]) and len(uses) == 6
    assert [t.name for t in transcript.tools] == [
        t["function"]["name"] for t in log["kwargs"]["tools"]
    ]
    usage = log["response"]["usage"]
    last = max(i for i, m in enumerate(transcript.messages) if m.role == "assistant")
    assert transcript.usage == {last: ProviderUsage(usage["prompt_tokens"], 199)}
    assert transcript.meta["function_calling"] == "native" and transcript.meta["version"] == 0
    assert transcript.meta["cost"] == log["cost"]


@pytest.mark.parametrize("path", V0 + V1, ids=[f"{p.parent.name}/{p.name[:40]}" for p in V0 + V1])
def test_each_fixture_is_claimed_by_its_own_versions_check_alone(path: Path) -> None:
    log = json.loads(path.read_text())
    version = 0 if path in V0 else 1
    assert (is_v0_log(log), is_v1_log(log)) == (version == 0, version == 1)
    assert detect_format(log) == "openhands"
    assert load(path).meta["version"] == version
    assert not is_v0_log([log]) and not is_v0_log(None) and not is_v1_log([log])


_V0_WRITTEN = ("messages", "response", "args", "kwargs", "timestamp", "cost")
_V0_SOMETIMES = ("fncall_messages", "fncall_response", "critic_results")
_V1_WRITTEN = ("context_window", "response", "cost", "timestamp", "latency_sec")
_V1_SOMETIMES = ("tools", "kwargs", "raw_messages", "raw_response", "usage_summary")


@st.composite
def v0_logs(draw: st.DrawFn) -> dict[str, Any]:
    """A log as V0's ``llm.py`` writes one: its six keys, the fncall pair when calling is
    prompted, a critic's results in some versions; any values of the right kind."""
    log = {k: draw(json_value) for k in _V0_WRITTEN}
    log |= {"messages": draw(st.lists(json_value, max_size=3)), "response": draw(_objects)}
    if draw(st.booleans()):
        log |= {"fncall_messages": draw(st.lists(json_value, max_size=3))}
        log |= {"fncall_response": draw(_objects)}
    if draw(st.booleans()):
        log["critic_results"] = draw(json_value)
    return log


@st.composite
def v1_logs(draw: st.DrawFn) -> dict[str, Any]:
    """A log as the SDK's telemetry writes one: the chat path's ``messages`` or the Responses
    path's ``llm_path``/``instructions``/``input``, what it always adds, and its optional keys."""
    log = {k: draw(json_value) for k in _V1_WRITTEN}
    log["response"] = draw(_objects)
    if draw(st.booleans()):
        log["messages"] = draw(st.lists(json_value, max_size=3))
    else:
        log |= {"llm_path": "responses", "instructions": draw(json_value)}
        log["input"] = draw(st.lists(json_value, max_size=3))
    for key in draw(st.lists(st.sampled_from(_V1_SOMETIMES), unique=True)):
        log[key] = draw(json_value)
    return log


_objects = st.dictionaries(st.text(max_size=8), json_value, max_size=3)


@SETTINGS
@given(v0_logs(), v1_logs())
def test_v0_and_v1_detection_never_cross(v0: dict[str, Any], v1: dict[str, Any]) -> None:
    assert is_v0_log(v0) and not is_v1_log(v0)
    assert is_v1_log(v1) and not is_v0_log(v1)
    # Each version's marks are the other's absence (the writers' keys, read in their source).
    assert not set(V0_KEYS) & set(v1) and not set(V1_KEYS) & set(v0)


def _v0(reply: dict[str, Any], history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": "text"}],
        "response": {"choices": [{"message": {"role": "assistant", "content": "text"}}]},
        "args": [],
        "kwargs": {},
        "timestamp": 1.0,
        "cost": 0.0,
        "fncall_messages": [{"role": "user", "content": "go"}, *(history or [])],
        "fncall_response": {
            "choices": [{"message": reply}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7},
        },
    }


def test_reasoning_of_a_reply_and_of_the_history_is_kept_as_thinking() -> None:
    earlier = {
        "role": "assistant",
        "content": "Looking.",
        "thinking_blocks": [
            {"type": "thinking", "thinking": "Check the file.", "signature": "sig1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "thinking"},  # no text: counted
        ],
        "reasoning_content": "Check the file.",
        "tool_calls": [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "a.py"}
    reply = {"role": "assistant", "content": "Done.", "reasoning_content": "It is a.py."}
    transcript = load(_v0(reply, [earlier, result]))
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("assistant", ("thinking", "Check the file.", "sig1")),
        ("assistant", ("redacted", "opaque")),
        ("assistant", ("text", "Looking.")),
        ("assistant", ("use", "c1", "ls", {})),
        ("user", ("result", "c1", "a.py", False)),
        ("assistant", ("thinking", "It is a.py.", "")),
        ("assistant", ("text", "Done.")),
    ]
    assert transcript.usage == {3: ProviderUsage(50, 7)}
    census = transcript.census
    assert census is not None and census.left_out == {"thinking block without its text": 1}


def test_a_v0_log_without_its_fncall_response_reads_the_text_reply_once() -> None:
    log = _v0({"role": "assistant", "content": "x"})
    del log["fncall_response"]
    log["response"]["usage"] = {"prompt_tokens": 9, "completion_tokens": 2}
    transcript = load(log)
    assert shown(transcript)[-1] == ("assistant", ("text", "text"))
    assert transcript.usage == {1: ProviderUsage(9, 2)}
    census = added_up(transcript)
    assert census.read["message as the model read it"] == 1
    assert "response as the model wrote it" not in census.read


def test_a_prompted_logs_system_text_is_the_one_the_model_read() -> None:
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {}}}]
    log = _v0({"content": "Hi."})  # a reply without its role is still the reply
    log["fncall_messages"].insert(0, {"role": "developer", "content": "Be brief."})
    log["messages"].insert(0, {"role": "system", "content": "Be brief.\nTools: ls"})
    log["kwargs"] = {"tools": tools}
    transcript = load(log)
    # The tools were described in the System text the model read: no schemas besides.
    assert transcript.system == "Be brief.\nTools: ls" and transcript.tools == ()
    assert shown(transcript) == [("user", ("text", "go")), ("assistant", ("text", "Hi."))]
    # Without that text, the System text is the call's, and its tools the kwargs'.
    del log["messages"]
    alone = load(log)
    assert alone.system == "Be brief." and [t.name for t in alone.tools] == ["ls"]


@pytest.mark.parametrize("native", [False, True])
def test_a_message_that_is_not_one_is_named_with_its_file(tmp_path: Path, native: bool) -> None:
    path = tmp_path / "completion.json"
    log = _v0({"role": "assistant", "content": "x"})
    log["fncall_messages"].append("junk")
    if native:  # the log's own messages, with their calls
        log = {k: v for k, v in log.items() if not k.startswith("fncall")}
        log["messages"] = log["messages"] + ["junk"]
    path.write_text(json.dumps(log))
    with pytest.raises(MessageFormatError) as raised:
        load(path)
    assert str(raised.value) == f"{path} message 1: not an object with a role"
