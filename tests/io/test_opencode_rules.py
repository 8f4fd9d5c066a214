"""OpenCode exports written here message by message, each rule of ``ctxlab/io/formats/opencode/parse.py`` by
the value a user reads: which documents are OpenCode's, the parts a user message sends, one
request per step with that step's usage, each tool state's result, failed and aborted replies,
summaries as compactions, messages of another role, and the census by record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io._build import EMPTY_USAGE
from ctxlab.io.formats.opencode.parse import is_opencode_export, is_opencode_session_info
from ctxlab.messages import ProviderUsage
from tests.io.contracts.opencode import (
    FAILED_REPLIES,
    START,
    assistant,
    export,
    finish,
    text,
    user,
)
from tests.io.shown import added_up, census_read, shown

STORED = next(
    (Path(__file__).parents[1] / "fixtures" / "opencode" / "storage" / "session").glob("*/*.json")
)
PNG = "data:image/png;base64,iVBORw0KGgo="


def _tool(call_id: str, state: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool", "callID": call_id, "tool": "read", "state": state, **extra}


def _load(*messages: Any) -> Any:
    return load(export(*messages), format="opencode")


def test_which_documents_are_opencodes() -> None:
    good = export(user(text("hi")))
    assert is_opencode_export(good) and detect_format(good) == "opencode"
    assert is_opencode_export({"info": {"id": "ses"}, "messages": []})
    for bad in (
        None,
        [good],
        {"info": {"id": "ses_1"}, "messages": {}},
        {"info": {"id": "s_1"}, "messages": []},
        {"info": {}, "messages": []},
        {"info": "ses_1", "messages": []},
        {"info": {"id": "ses_1"}, "messages": [{"info": {}}]},
        {"info": {"id": "ses_1"}, "messages": [{"parts": []}]},
        {"info": {"id": "ses_1"}, "messages": ["x"]},
    ):
        assert not is_opencode_export(bad)
    # Only the first twenty messages are looked at.
    assert is_opencode_export({"info": {"id": "ses_1"}, "messages": [user()] * 20 + ["x"]})
    stored = {"id": "ses_1", "projectID": "p", "time": {}}
    assert is_opencode_session_info(stored)
    for bad in (
        None,
        {**stored, "id": "ses1"},
        {**stored, "id": None},
        {"id": "ses_1", "time": {}},
        {**stored, "time": 5},
    ):
        assert not is_opencode_session_info(bad)


def test_a_message_that_is_no_info_and_parts_is_refused_naming_it() -> None:
    for broken in ({"info": {"role": "user"}}, {"info": {}, "parts": []}, "x"):
        with pytest.raises(MessageFormatError) as raised:
            _load(user(text("hi")), broken)
        assert str(raised.value).endswith("message 1: expected {info, parts} (an OpenCode message)")


def test_what_a_user_message_sends() -> None:
    transcript = _load(
        user(
            text("look"),
            text("hidden", ignored=True),
            text("  "),
            {"type": "text", "text": None},
            {"type": 5},
            {"type": "file", "mime": "text/plain", "url": "file:///a.py"},
            {"type": "file", "mime": "application/x-directory", "url": "file:///src"},
            {"type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBORw0KGgo="},
            {"type": "file", "mime": "image/png", "url": 5},
            {"type": "file", "mime": "application/pdf", "url": "file:///b.pdf"},
            {"type": "compaction"},
            {"type": "subtask"},
            {"type": "agent"},
            "junk",
            system="Be brief.",
        ),
        user(text("again", ignored=True), system="Be brief."),
        user(text("more"), system="Use tools."),
    )
    assert transcript.system == "Be brief.\n\nUse tools."
    assert shown(transcript) == [
        ("user", ("text", "look")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("provider", {"type": "file", "mime": "image/png", "url": 5})),
        (
            "user",
            ("provider", {"type": "file", "mime": "application/pdf", "url": "file:///b.pdf"}),
        ),
        ("user", ("text", "What did we do so far?")),
        ("user", ("text", "The following tool was executed by the user")),
        ("user", ("text", "more")),
    ]
    census_read(
        transcript,
        "record",
        read={
            "info": 1,
            "message (user)": 3,
            "part (text)": 6,
            "part (5)": 1,
            "part (file)": 5,
            "part (compaction)": 1,
            "part (subtask)": 1,
            "part (agent)": 1,
            "part (unreadable)": 1,
        },
        skipped={
            "ignored text part": 2,
            "empty text part": 2,
            "file part (sent as its text part)": 2,
            "agent part": 1,
            "unreadable part": 2,
            "message without a part sent": 1,
        },
    )
    # Of OpenCode's storage, each record is a file, and the kinds say so.
    stored = load(STORED)
    stored_census = stored.census
    assert stored_census is not None and stored_census.adds_up
    assert stored_census.read["session file"] == 1
    assert {k.split(" (")[0] for k in stored_census.read} == {
        "session file",
        "message file",
        "part file",
    }


def test_one_request_per_step_with_its_steps_usage() -> None:
    transcript = _load(
        user(text("go")),
        assistant(
            START,
            {"type": "reasoning", "text": "hm", "metadata": {"anthropic": {"signature": "s"}}},
            {"type": "reasoning", "text": "more", "metadata": {"anthropic": {"signature": 5}}},
            {"type": "reasoning", "text": " "},
            text("Reading."),
            _tool("c1", {"status": "completed", "input": {"p": 1}, "output": "a"}),
            finish(10, 2, reasoning=3, cache={"read": 100, "write": 50}),
            START,
            text(""),
            {"type": "patch"},
            {"type": "step-finish"},
            finish(99, 9),  # a step without output: its usage lost
            START,
            {"type": "file", "mime": "image/png", "url": PNG},
            "junk",
            finish(20, 4, cache={}),
            {"type": "step-finish", "tokens": None},  # a finish without tokens is not the one
            {"type": "text", "text": "", "tokens": {"input": 1}},  # nor a part of another type
            providerID="anthropic",
            modelID="claude",
            tokens={"input": 7, "output": 7},  # the turn's total: steps have their own
        ),
    )
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("assistant", ("thinking", "hm", "s")),
        ("assistant", ("thinking", "more", "")),
        ("assistant", ("text", "Reading.")),
        ("assistant", ("use", "c1", "read", {"p": 1})),
        ("user", ("result", "c1", "a", False)),
        # A reply's file is kept whole (a reply holds no image block).
        ("assistant", ("provider", {"type": "file", "mime": "image/png", "url": PNG})),
    ]
    assert transcript.usage == {1: ProviderUsage(10, 5, 100, 50), 3: ProviderUsage(20, 4)}
    assert transcript.meta["models"] == ["anthropic/claude"]
    skipped = transcript.meta["skipped"]
    assert skipped == {
        "empty reasoning part": 1,
        "empty text part": 2,
        "patch part": 1,
        "step-finish part": 2,
        "unreadable part": 1,
        "step without output": 1,
    }
    census = added_up(transcript)
    assert census.usage_lost == {"on a step without output": 1}
    assert census.read["part (step-start)"] == 3 and census.read["message (assistant)"] == 1


def test_a_turn_without_steps_takes_the_turns_own_usage() -> None:
    one = _load(user(text("go")), assistant(text("ok"), tokens={"input": 5, "output": 1}))
    assert one.usage == {1: ProviderUsage(5, 1)}
    # A step-finish without tokens: the step's usage is unknown, not the turn's total.
    bare = {"type": "step-finish"}
    unknown = _load(user(text("go")), assistant(text("ok"), bare, tokens={"input": 5, "output": 1}))
    assert unknown.usage == {}
    # Two steps and no step-finish: the turn's total is never spread over them.
    two = _load(
        user(text("go")),
        assistant(START, text("a"), START, text("b"), tokens={"input": 5, "output": 1}),
    )
    assert two.usage == {}
    assert [b for _, b in shown(two)] == [("text", "go"), ("text", "a"), ("text", "b")]


def test_each_tool_state_is_its_result() -> None:
    states = {
        "done": {"status": "completed", "output": "out"},
        "empty": {"status": "completed"},
        "cleared": {"status": "completed", "output": "big", "time": {"compacted": 5}},
        "failed": {"status": "error", "error": "boom"},
        "bare": {"status": "error"},
        "stopped": {"status": "error", "metadata": {"interrupted": True, "output": "partial"}},
        "stopped-no-output": {"status": "error", "error": "x", "metadata": {"interrupted": True}},
        "not-stopped": {
            "status": "error",
            "error": "y",
            "metadata": {"interrupted": 1, "output": "z"},
        },
        "running": {"status": "running"},
        "pending": "junk",
    }
    parts = [_tool(name, state) for name, state in states.items()]
    parts.append({"type": "tool", "id": "prt_9", "state": {"status": "completed", "input": [1]}})
    transcript = _load(user(text("go")), assistant(*parts))
    results = {b[1]: b[2:] for _, b in shown(transcript) if b[0] == "result"}
    assert results == {
        "done": ("out", False),
        "empty": ("(no output)", False),
        "cleared": ("[Old tool result content cleared]", False),
        "failed": ("boom", True),
        "bare": ("error", True),
        "stopped": ("partial", False),
        "stopped-no-output": ("x", True),
        "not-stopped": ("y", True),
        "running": ("[Tool execution was interrupted]", True),
        "pending": ("[Tool execution was interrupted]", True),
        "prt_9": ("(no output)", False),
    }
    uses = [b for _, b in shown(transcript) if b[0] == "use"]
    assert uses[-1] == ("use", "prt_9", "tool", {})


def test_a_failed_reply_is_not_sent_and_its_usage_is_lost() -> None:
    # The messages: `FAILED_REPLIES` (tests/io/contracts/opencode.py), whose census (skipped,
    # usage lost by reason) the contract checks.
    transcript = load(FAILED_REPLIES.source, format="opencode")
    assert [b for _, b in shown(transcript)] == [
        ("text", "go"),
        ("text", "partial"),
        ("thinking", "hm", ""),
        ("text", "ok"),
    ]
    assert transcript.usage == {1: ProviderUsage(7, 1)}  # the later of two merged replies


def test_a_message_of_another_role_is_counted_with_its_parts() -> None:
    transcript = _load(
        user(text("go")),
        {"info": {"role": "system"}, "parts": [text("x"), finish(3, 1), {"type": "step-finish"}]},
        assistant(text("ok")),
    )
    assert transcript.meta["skipped"] == {
        "message of role 'system'": 1,
        "part of a message of another role": 3,
    }
    census = added_up(transcript)
    assert census.usage_lost == {"part of a message of another role: its step's usage": 1}
    assert census.read["message (system)"] == 1


def test_a_summary_reply_is_opencodes_compaction() -> None:
    transcript = _load(
        user(text("go")),
        assistant(text("one")),
        user(text("more")),
        assistant(START, text("two"), START, text("three")),
        user({"type": "compaction"}),
        assistant(text("Summary: ..."), summary=True, modelID="m", providerID="p"),
        assistant(text("again"), summary="yes", modelID="m", providerID="p"),
        assistant(text("x"), modelID="", providerID="q"),
    )
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {
            "kind": "compact",
            "trigger": "unknown",
            "replies_before": 2,  # two steps without a call between them: one reply
            "summary_head": "What did we do so far?",
        }
    ]
    assert transcript.meta["models"] == ["p/m"]


def test_a_session_without_a_model_or_compaction_notes_neither() -> None:
    transcript = _load(user(text("go")), assistant(text("ok")))
    assert "models" not in transcript.meta and "compactions" not in transcript.meta
    assert transcript.system == ""


@settings(database=None, max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 10**4), st.integers(0, 10**4)),
        min_size=1,
        max_size=6,
    )
)
def test_every_steps_usage_is_its_own_request(steps: list[tuple[int, int, int]]) -> None:
    # A turn of n steps (each with its call) is n requests, each billed its own step-finish's
    # tokens (reasoning billed as output), whatever the numbers — but a step that counts no
    # token at all is no bill: no usage, counted lost as empty.
    parts: list[Any] = []
    for i, (prompt, output, reasoning) in enumerate(steps):
        call = _tool(f"c{i}", {"status": "completed", "output": "x"})
        parts += [START, text(f"step {i}"), call, finish(prompt, output, reasoning=reasoning)]
    transcript = _load(user(text("go")), assistant(*parts))
    assert transcript.usage == {
        2 * i + 1: ProviderUsage(p, o + r) for i, (p, o, r) in enumerate(steps) if p or o or r
    }
    census = transcript.census
    empty = sum(not any(step) for step in steps)
    assert census is not None and census.adds_up
    assert census.usage_lost == ({EMPTY_USAGE: empty} if empty else {})


def test_a_step_without_its_finish_takes_no_other_steps_usage() -> None:
    # The first step's finish is missing (it stopped mid-way): its request's usage is unknown,
    # and the second step keeps its own.
    transcript = _load(
        user(text("go")),
        assistant(
            START,
            text("a"),
            _tool("c1", {"status": "completed", "output": "x"}),
            START,
            text("b"),
            finish(20, 4),
        ),
    )
    assert transcript.usage == {3: ProviderUsage(20, 4)}
