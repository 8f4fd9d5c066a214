"""Continue sessions written here item by item, each rule of ``ctxlab/io/formats/continue_/parse.py`` by the
value a user reads: which documents are sessions, the request Continue builds from each item
(context items, parts, thinking, calls and the results rendered from their states, older
``tool`` messages), its summaries as compactions, each reply's usage, and the census."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.continue_.parse import is_continue_session
from ctxlab.messages import ProviderUsage
from tests.io.contracts.continue_ import EACH_ITEM, call, item
from tests.io.shown import added_up, shown


def _load(tmp_path: Path, history: list[Any], **session: Any) -> Any:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"sessionId": "s1", "history": history, **session}))
    return load(path, format="continue")


def test_a_session_is_an_id_and_a_history_of_items_holding_a_message() -> None:
    good = {"sessionId": "s", "history": [{"message": {"role": "user", "content": "x"}}]}
    assert is_continue_session(good) and detect_format(good) == "continue"
    assert is_continue_session({"sessionId": "s", "history": []})
    for bad in (
        None,
        [good],
        {"sessionId": 5, "history": []},
        {"history": []},
        {"sessionId": "s", "history": {}},
        {"sessionId": "s", "history": [{"text": "x"}]},
        {"sessionId": "s", "history": ["x"]},
    ):
        assert not is_continue_session(bad)
    # Only the first twenty items are looked at.
    items = [{"message": {"role": "user", "content": "x"}}] * 20
    assert is_continue_session({"sessionId": "s", "history": [*items, "later"]})


def test_a_session_without_a_history_list_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"sessionId": "s1", "history": {}}))
    with pytest.raises(MessageFormatError) as raised:
        load(path, format="continue")
    assert str(raised.value) == f"{path}: a Continue session holds a 'history' list"


def test_each_item_becomes_what_continue_sends(tmp_path: Path) -> None:
    # The history: `EACH_ITEM` (tests/io/contracts/continue_.py), whose census the contract
    # checks (records read by kind, skipped by reason).
    transcript = load(EACH_ITEM.made(tmp_path), format="continue")
    # A text part without text adds no line.
    assert transcript.system == "Be brief.\nCite files.\n\nUse tools."
    assert shown(transcript) == [
        ("user", ("text", "```py a.py\nx=1\n```\n")),
        ("user", ("text", "fix it")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("provider", {"type": "imageUrl", "imageUrl": {}})),
        ("assistant", ("thinking", "Reading a first.", "sig")),
        ("assistant", ("thinking", "More.", "")),
        ("assistant", ("redacted", "ENC")),
        ("user", ("text", "again")),
    ]
    meta = transcript.meta
    assert meta["sessionId"] == "s1" and meta["title"] == "T" and meta["workspaceDirectory"] == "/w"
    assert meta["models"] == ["M"]


def test_what_an_item_holds_that_continue_does_not_send(tmp_path: Path) -> None:
    history = [
        item("tool", "before any call"),  # a tool message first: no call waits for it
        item("user", [{"type": "imageUrl", "imageUrl": {"url": "data:image/png;base64,"}}]),
        item("user", [{"type": "code", "text": "x = 1"}]),  # a part of another kind
        item("thinking", "thought", message={"redactedThinking": ""}),
        item(
            "assistant",
            "",
            message={"toolCalls": [call("a"), call("b"), call("c"), call("d")]},
            toolCallStates=[
                {"toolCallId": "a", "status": "done", "output": [{"content": ""}]},
                {"toolCallId": "b", "status": "done", "output": "  "},
                {"toolCallId": "c", "status": "done", "output": [{"content": "x", "status": 5}]},
                {"toolCallId": "d", "status": "done", "output": [{"content": "y", "status": ""}]},
            ],
        ),
    ]
    transcript = _load(tmp_path, history)
    blocks = shown(transcript)
    assert blocks[0] == ("user", ("provider", {"type": "code", "text": "x = 1"}))
    assert blocks[1] == ("assistant", ("thinking", "thought", ""))
    results = [b[1:] for _, b in blocks if b[0] == "result"]
    assert results == [
        ("a", "No tool output", False),
        ("b", "No tool output", False),
        ("c", "x", False),
        ("d", "y", False),
    ]
    skipped = transcript.meta["skipped"]
    assert skipped["tool message (the result comes from its call's state)"] == 1
    # The message of only an image without its bytes: skipped once, for it (i67-skip).
    assert "message with nothing kept" not in skipped
    assert skipped["image without data"] == 1


def test_a_session_without_its_optional_fields_notes_none(tmp_path: Path) -> None:
    transcript = _load(tmp_path, [item("user", "hi")], chatModelTitle=5)
    for key in ("title", "workspaceDirectory", "models", "session_usage", "compactions"):
        assert key not in transcript.meta


def test_calls_and_the_results_rendered_from_their_states(tmp_path: Path) -> None:
    states = [
        {"toolCallId": "c1", "status": "done", "output": [{"content": "a", "status": "ok"}, {}]},
        {"toolCall": {"id": "c2"}, "status": "canceled", "output": [{"content": "x"}]},
        {"toolCallId": "c3", "status": "errored"},
        {"toolCallId": "c4", "status": "errored", "output": "boom"},
        {"toolCallId": "c5", "status": "done", "output": []},
        {"toolCallId": "c6", "status": "done"},  # a state whose call the reply does not hold
        "junk",
    ]
    calls = [call(f"c{i}") for i in range(1, 6)]
    calls += [call("", None, None), call(7, "grep", {"q": 1}), "junk"]
    history = [
        item("user", "go"),
        item("assistant", "Reading.", message={"toolCalls": calls}, toolCallStates=states),
        item("user", "next"),
        # The CLI keeps the calls in their states only; one state per item before July 2025.
        item(
            "assistant",
            "",
            toolCallState={"toolCall": call("k1"), "status": "done", "output": [{"content": "k"}]},
        ),
        item("assistant", "", toolCallState="junk"),
    ]
    transcript = _load(tmp_path, history)
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("assistant", ("text", "Reading.")),
        ("assistant", ("use", "c1", "read", {"path": "a"})),
        ("assistant", ("use", "c2", "read", {"path": "a"})),
        ("assistant", ("use", "c3", "read", {"path": "a"})),
        ("assistant", ("use", "c4", "read", {"path": "a"})),
        ("assistant", ("use", "c5", "read", {"path": "a"})),
        ("assistant", ("use", "continue_call_6", "tool", {})),
        ("assistant", ("use", "continue_call_7", "grep", {"q": 1})),
        # The calls without a state or a tool message: answered by the builder's repair.
        ("user", ("result", "continue_call_6", "No result was recorded for this call.", True)),
        ("user", ("result", "continue_call_7", "No result was recorded for this call.", True)),
        ("user", ("result", "c1", "a\n[Status: ok]\n\n", False)),
        ("user", ("result", "c2", "The user cancelled this tool call.", False)),
        ("user", ("result", "c3", "There was an error calling the tool.", True)),
        ("user", ("result", "c4", "boom", True)),
        ("user", ("result", "c5", "No tool output", False)),
        ("user", ("text", "next")),
        ("assistant", ("use", "k1", "read", {"path": "a"})),
        ("user", ("result", "k1", "k", False)),
    ]
    assert transcript.meta["skipped"]["tool call state without a call"] == 1
    assert transcript.meta["skipped"]["empty message"] == 1


def test_older_tool_messages_answer_calls_that_have_no_state(tmp_path: Path) -> None:
    history = [
        item("user", "go"),
        item("assistant", "", message={"toolCalls": [call("a"), call("b"), call("c")]}),
        item("tool", "A", message={"toolCallId": "a"}),
        item("tool", {"rows": ["é"]}, message={"toolCallId": "b"}),
        item("tool", "", message={"toolCallId": "c"}),
        item("tool", "again", message={"toolCallId": "a"}),  # answered already
        item("tool", "who?"),
        item("user", "next"),
        item("assistant", "", message={"toolCalls": [call("d")]}),
        item("user", "before the result"),
        item("tool", "late", message={"toolCallId": "d"}),  # its call's turn is over
    ]
    transcript = _load(tmp_path, history)
    results = [b[1:] for r, b in shown(transcript) if b[0] == "result"]
    assert results == [
        ("a", "A", False),
        ("b", '{"rows": ["é"]}', False),
        ("c", "No tool output", False),
        ("d", "No result was recorded for this call.", True),
    ]
    assert transcript.meta["skipped"]["tool message (the result comes from its call's state)"] == 3


def test_a_summary_is_a_compaction_before_the_requests_after_it(tmp_path: Path) -> None:
    long = "S" * 300
    history = [
        item("user", "go"),
        item("assistant", "one"),
        item("user", "more"),
        item("assistant", "two", conversationSummary=long),
        item("user", "then"),
        item("assistant", "three", conversationSummary="  "),
        item("user", "x", conversationSummary="short"),
    ]
    transcript = _load(tmp_path, history)
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {"kind": "compact", "trigger": "unknown", "replies_before": 2, "summary_head": long[:200]},
        {"kind": "compact", "trigger": "unknown", "replies_before": 3, "summary_head": "short"},
    ]
    texts = [b[1] for r, b in shown(transcript) if r == "user"]
    assert texts == ["go", "more", long, "then", "x", "short"]


def test_usage_as_each_provider_counts_it(tmp_path: Path) -> None:
    openai = {
        "promptTokens": 100,
        "completionTokens": 5,
        "promptTokensDetails": {"cachedTokens": 60},
    }
    plain = {"promptTokens": 100, "completionTokens": 5}
    anthropic = {
        "promptTokens": 40,
        "completionTokens": 5,
        "promptTokensDetails": {"cachedTokens": 60, "cacheWriteTokens": 30},
    }
    written_only = {
        "promptTokens": 40,
        "completionTokens": 5,
        "promptTokensDetails": {"cacheWriteTokens": 30},
    }
    history = []
    for usage in (openai, plain, anthropic, written_only, {"completionTokens": 5}):
        history += [item("user", "q"), item("assistant", "a", message={"usage": usage})]
    history += [item("user", "q"), item("assistant", "", message={"usage": plain})]
    transcript = _load(tmp_path, history, usage={"totalCost": 0.5})
    assert transcript.usage == {
        1: ProviderUsage(40, 5, 60, 0),
        3: ProviderUsage(100, 5, 0, 0),
        5: ProviderUsage(40, 5, 60, 30),
        7: ProviderUsage(40, 5, 0, 30),
    }
    assert transcript.meta["session_usage"] == {"totalCost": 0.5}
    census = transcript.census
    assert census is not None and census.usage_lost == {"on a reply with nothing kept": 1}


@pytest.mark.parametrize("field", ["promptTokens", "completionTokens"])
def test_an_anthropic_count_that_is_no_number_is_refused_by_name(
    tmp_path: Path, field: str
) -> None:
    usage: dict[str, Any] = {
        "promptTokens": 40,
        "completionTokens": 5,
        "promptTokensDetails": {"cacheWriteTokens": 30},
    }
    usage[field] = "many"
    with pytest.raises(MessageFormatError, match=f"usage field '{field}' is 'many'"):
        _load(tmp_path, [item("user", "q"), item("assistant", "a", message={"usage": usage})])


@settings(database=None, max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["state", "tool", "none"]), min_size=1, max_size=6))
def test_every_call_gets_one_result_in_its_calls_order(kinds: list[str]) -> None:
    # However a reply's calls are answered (a state, an older tool message, nothing), each call
    # has exactly one result, in the order of the calls, and the census adds up.
    import tempfile

    calls = [call(f"c{i}") for i in range(len(kinds))]
    states = [
        {"toolCallId": f"c{i}", "status": "done", "output": [{"content": f"s{i}"}]}
        for i, k in enumerate(kinds)
        if k == "state"
    ]
    history = [
        item("user", "go"),
        item("assistant", "", message={"toolCalls": calls}, toolCallStates=states),
    ]
    history += [
        item("tool", f"t{i}", message={"toolCallId": f"c{i}"})
        for i, k in enumerate(kinds)
        if k == "tool"
    ]
    with tempfile.TemporaryDirectory() as folder:
        transcript = _load(Path(folder), history)
    results = [b[1:] for _, b in shown(transcript) if b[0] == "result"]
    expected = {"state": ("s{}", False), "tool": ("t{}", False), "none": (None, True)}
    assert sorted(r[0] for r in results) == sorted(f"c{i}" for i in range(len(kinds)))
    by_id = {r[0]: r[1:] for r in results}
    for i, kind in enumerate(kinds):
        text, error = expected[kind]
        assert by_id[f"c{i}"][1] is error
        if text is not None:
            assert by_id[f"c{i}"][0] == text.format(i)
    added_up(transcript)
