"""OpenHands V1 conversation folders written here event by event, each rule of
``ctxlab/io/formats/openhands/v1.py`` by the value a user reads: the System prompt and tools, messages,
a response's calls as one reply, each kind of result, condensations as compactions, the events
that are not the conversation counted by kind, and each reply's usage by its response id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io.formats.openhands.logs import is_v1_log
from ctxlab.io.formats.openhands.v1 import is_v1_event, v1_folder_events
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, census_in, shown

PNG = "data:image/png;base64,iVBORw0KGgo="


def _event(kind: str, n: int, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "id": f"e{n}", "source": "agent", **fields}


def _folder(tmp_path: Path, events: list[Any], state: dict[str, Any] | None = None) -> Any:
    folder = tmp_path / "conv"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text(json.dumps(state or {}))
    for n, event in enumerate(events):
        name = f"event-{n:05d}-{n:08x}.json"
        (folder / "events" / name).write_text(json.dumps(event))
    (folder / "events" / "notes.txt").write_text("not an event file")
    return load(folder)


def _usage(response: str, prompt: int, completion: int, read: int = 0, write: int = 0) -> Any:
    return {
        "response_id": response,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "model": "m-usage",
    }


def _state(*usages: Any, **extra: Any) -> dict[str, Any]:
    metrics = {"agent": {"token_usages": list(usages)}, "condenser": "junk"}
    return {"stats": {"usage_to_metrics": metrics}, **extra}


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _message(n: int, role: str, *content: Any, **fields: Any) -> dict[str, Any]:
    return _event("MessageEvent", n, llm_message={"role": role, "content": list(content)}, **fields)


def _action(n: int, response: Any, call_id: Any, **fields: Any) -> dict[str, Any]:
    call = {"id": call_id, "name": "terminal", "arguments": '{"command": "ls"}'}
    return _event("ActionEvent", n, llm_response_id=response, tool_call=call, **fields)


def test_which_documents_are_v1_events_and_logs() -> None:
    assert is_v1_event({"kind": "MessageEvent", "source": "user", "id": "x"})
    for bad in (
        None,
        {"kind": "Other", "source": "user", "id": "x"},
        {"kind": "MessageEvent", "id": "x"},
        {"kind": "MessageEvent", "source": "user"},
    ):
        assert not is_v1_event(bad)
    log = {"response": {}, "messages": [], "latency_sec": 1}
    assert is_v1_log(log)
    assert is_v1_log({"response": {}, "input": [], "cost": 0})
    assert is_v1_log({"response": {}, "input": [], "context_window": 1})
    for bad in (
        None,
        {**log, "response": []},
        {"response": {}, "messages": {}, "latency_sec": 1},
        {"response": {}, "messages": []},
    ):
        assert not is_v1_log(bad)


def test_each_event_as_the_model_saw_it(tmp_path: Path) -> None:
    events = [
        _event(
            "SystemPromptEvent",
            0,
            system_prompt={"text": "You are OpenHands."},
            dynamic_context={"text": "Repo: shop."},
            tools=[{"name": "terminal"}, "junk"],
        ),
        _message(1, "user", _text("fix it"), _text(" "), {"type": "image", "image_urls": [PNG]}),
        _message(2, "user", extended_content=[_text("context")]),
        _message(3, "user", {"type": "audio", "x": 1}, "junk"),
        _action(4, "r1", "c1", thought=[_text("Looking.")], thinking_blocks=[{}, {}]),
        _action(5, "r1", None, tool_call_id="tc2"),
        _event("ActionEvent", 6, llm_response_id="r1", tool_call={}),
        _event(
            "ObservationEvent",
            7,
            tool_call_id="c1",
            observation={"content": [_text("a.py")], "is_error": False},
        ),
        _event("ObservationEvent", 8, tool_call_id="tc2", observation={"is_error": True}),
        _event("UserRejectObservation", 9, tool_call_id="e6", rejection_reason="no"),
        _action(10, "r2", "c4"),
        _event("AgentErrorEvent", 11, tool_call_id="c4", error="bad args"),
        _action(12, "r3", "c5"),
        _event("AgentErrorEvent", 13, tool_call_id="c5"),
        _event("ObservationEvent", 14, observation={"content": "x"}),  # no call id
        _event(
            "MessageEvent",
            15,
            llm_message={
                "role": "assistant",
                "content": [_text("Done.")],
                "reasoning_content": "hm",
            },
            llm_response_id="r4",
        ),
        _message(16, "assistant"),
        _event("ConversationStateUpdateEvent", 17),
        "junk",
    ]
    transcript = _folder(tmp_path, events, {"id": "conv-1"})
    assert transcript.system == "You are OpenHands.\n\nRepo: shop."
    assert [t.name for t in transcript.tools] == ["terminal"]
    assert shown(transcript) == [
        ("user", ("text", "fix it")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("text", "context")),
        ("user", ("provider", {"type": "audio", "x": 1})),
        ("assistant", ("text", "Looking.")),
        ("assistant", ("use", "c1", "terminal", {"command": "ls"})),
        ("assistant", ("use", "tc2", "terminal", {"command": "ls"})),
        ("assistant", ("use", "e6", "tool", {})),
        ("user", ("result", "c1", "a.py", False)),
        ("user", ("result", "tc2", "", True)),
        ("user", ("result", "e6", "Action rejected: no", True)),
        ("assistant", ("use", "c4", "terminal", {"command": "ls"})),
        ("user", ("result", "c4", "bad args", True)),
        ("assistant", ("use", "c5", "terminal", {"command": "ls"})),
        ("user", ("result", "c5", "error", True)),
        ("assistant", ("thinking", "hm", "")),
        ("assistant", ("text", "Done.")),
    ]
    meta = transcript.meta
    assert meta["conversation_id"] == "conv-1"
    assert meta["skipped"] == {
        "thinking block without its text": 2,
        # The observation naming no call: skipped once, for its result (i67-skip).
        "tool result without a call id": 1,
        "message with nothing kept": 1,
        "ConversationStateUpdateEvent": 1,
        "not an OpenHands event (event 18)": 1,
    }
    census = census_in(transcript, "event")
    assert census.read["file of another kind"] == 1 and census.read["ActionEvent"] == 5


def test_each_replys_usage_is_its_responses(tmp_path: Path) -> None:
    events = [
        _message(0, "user", _text("go")),
        _action(1, "r1", "c1"),
        _action(2, "r1", "c2"),  # the same response: the same reply, billed once
        _event("ObservationEvent", 3, tool_call_id="c1", observation={"content": "A"}),
        _action(4, "r1", "c3"),  # after a result, still the same response's reply
        _event("ObservationEvent", 5, tool_call_id="c2", observation={"content": "B"}),
        _event("ObservationEvent", 6, tool_call_id="c3", observation={"content": "C"}),
        _message(7, "assistant", _text("Done."), llm_response_id="r2"),
        _message(8, "user", _text("more")),
        _message(9, "assistant", _text("Again."), llm_response_id="r2"),  # billed already
    ]
    state = _state(
        _usage("r1", 1000, 50, 600, 100),
        _usage("r2", 500, 5),
        _usage("r9", 1, 1),  # a completion with no reply among the events
        {"response_id": "", "model": "m-usage"},
        "junk",
        agent={"llm": {"model": "m-agent"}},
    )
    transcript = _folder(tmp_path, events, state)
    uses = [[u.id for u in m.tool_uses] for m in transcript.messages if m.role == "assistant"]
    assert uses[0] == ["c1", "c2", "c3"]
    assert transcript.usage == {1: ProviderUsage(300, 50, 600, 100), 3: ProviderUsage(500, 5)}
    census = added_up(transcript)
    assert census.usage_lost == {"a completion with no reply among the events": 1}
    assert transcript.meta["models"] == ["m-agent", "m-usage"]


def test_a_responses_reasoning_is_thinking_on_its_reply_once(tmp_path: Path) -> None:
    blocks = [{"type": "thinking", "thinking": "Plan.", "signature": "sg"}]
    item = {"id": "rs_1", "summary": ["Why.", " "], "content": ["How."], "encrypted_content": "E"}
    events = [
        _message(0, "user", _text("go")),
        # A response's first call carries its reasoning; another that repeats it adds none.
        _action(1, "r1", "c1", thinking_blocks=blocks, reasoning_content="Plan. (as text)"),
        _action(2, "r1", "c2", thinking_blocks=blocks),
        _event("ObservationEvent", 3, tool_call_id="c1", observation={"content": "A"}),
        _event("ObservationEvent", 4, tool_call_id="c2", observation={"content": "B"}),
        _action(5, "r2", "c3", responses_reasoning_item=item),
        _event("ObservationEvent", 6, tool_call_id="c3", observation={"content": "C"}),
        _message(7, "assistant", _text("Done."), llm_response_id="r3"),
    ]
    events[7]["llm_message"]["reasoning_content"] = "Sure."
    transcript = _folder(tmp_path, events)
    thinking = [(b[0], b[1][1]) for b in shown(transcript) if b[1][0] == "thinking"]
    assert thinking == [
        ("assistant", "Plan."),
        ("assistant", "Why."),
        ("assistant", "How."),
        ("assistant", "Sure."),
    ]
    assert shown(transcript)[1] == ("assistant", ("thinking", "Plan.", "sg"))
    census = added_up(transcript)
    assert census.left_out == {
        "reasoning content beside its thinking blocks": 1,
        "the same reasoning on another call of its response": 1,
        "encrypted reasoning of a Responses reasoning item": 1,
    }


def test_a_condensation_is_a_compaction(tmp_path: Path) -> None:
    long = "S" * 300
    events = [
        _message(0, "user", _text("go")),
        _message(1, "assistant", _text("one")),
        _message(2, "user", _text("more")),
        _event("Condensation", 3, summary=long, forgotten_event_ids=["e1"]),
        _event("Condensation", 4, summary=""),
        _event("Condensation", 5),
    ]
    transcript = _folder(tmp_path, events)
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {"kind": "compact", "trigger": "auto", "replies_before": 1, "summary_head": long[:200]},
        {"kind": "compact", "trigger": "auto", "replies_before": 1, "summary_head": ""},
    ]
    assert transcript.meta["skipped"] == {"empty condensation summary": 1, "Condensation": 1}
    added_up(transcript)
    assert [b[1] for _, b in shown(transcript)] == ["go", "one", "more", long]


@settings(database=None, max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=5))
def test_a_responses_calls_are_one_reply_billed_once(calls_per_response: list[int]) -> None:
    import tempfile

    events: list[Any] = [_message(0, "user", _text("go"))]
    usages = []
    n = 1
    for r, count in enumerate(calls_per_response):
        usages.append(_usage(f"r{r}", 100 * (r + 1), r))
        ids = [f"c{r}_{k}" for k in range(count)]
        for call_id in ids:
            events.append(_action(n, f"r{r}", call_id))
            n += 1
        for call_id in ids:
            events.append(
                _event("ObservationEvent", n, tool_call_id=call_id, observation={"content": "x"})
            )
            n += 1
    with tempfile.TemporaryDirectory() as folder:
        transcript = _folder(Path(folder), events, _state(*usages))
    replies = [m for m in transcript.messages if m.role == "assistant"]
    assert [len(m.tool_uses) for m in replies] == calls_per_response
    assert [transcript.usage[2 * r + 1].input_tokens for r in range(len(replies))] == [
        100 * (r + 1) for r in range(len(replies))
    ]
    census = transcript.census
    assert census is not None and census.adds_up and census.usage_lost == {}


# Completion logs: one call, the messages it sent and the reply it got.


def test_a_completion_log_of_chat_messages() -> None:
    log = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [{"type": "function", "function": {"name": "terminal", "parameters": {}}}],
        "response": {
            "model": "gpt-x",
            "choices": [{"message": {"role": "assistant", "content": "hello"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5},
        },
        "cost": 0.25,
        "latency_sec": 1.5,
    }
    transcript = load(log, format="openhands")
    assert transcript.system == "Be brief."
    assert shown(transcript) == [("user", ("text", "hi")), ("assistant", ("text", "hello"))]
    assert transcript.usage == {1: ProviderUsage(100, 5)}
    assert [t.name for t in transcript.tools] == ["terminal"]
    meta = transcript.meta
    assert meta["models"] == ["gpt-x"] and meta["cost"] == 0.25 and meta["latency_sec"] == 1.5
    # The tools may be the call's keyword arguments; a response without a choice adds no reply.
    kwargs = {**log, "tools": None, "kwargs": {"tools": log["tools"]}, "response": {"choices": []}}
    bare = load(kwargs, format="openhands")
    assert [t.name for t in bare.tools] == ["terminal"] and "models" not in bare.meta
    assert shown(bare) == [("user", ("text", "hi"))]
    odd = load({**log, "tools": "junk"}, format="openhands")
    assert odd.tools == ()


def test_a_completion_log_of_the_responses_api() -> None:
    log = {
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "response": {
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "hello"}],
                }
            ],
            "usage": {
                "input_tokens": 100,
                "output_tokens": 5,
                "input_tokens_details": {"cached_tokens": 60},
            },
        },
        "cost": 0.1,
    }
    transcript = load(log, format="openhands")
    assert transcript.system == "Be brief." and transcript.meta["version"] == 1
    assert shown(transcript) == [("user", ("text", "hi")), ("assistant", ("text", "hello"))]
    both = {**log, "input": [{"role": "developer", "content": "Use tools."}, *log["input"]]}
    assert load(both, format="openhands").system == "Be brief.\n\nUse tools."
    # The input count holds the cached tokens: kept apart.
    assert transcript.usage == {1: ProviderUsage(40, 5, 60, 0)}
    nothing = load({**log, "response": {"output": None}, "instructions": 5}, format="openhands")
    assert nothing.usage == {} and nothing.system == ""
    assert shown(nothing) == [("user", ("text", "hi"))]


def test_the_edges_of_a_conversation_folder(tmp_path: Path) -> None:
    events = [
        _event("SystemPromptEvent", 0, system_prompt={}, dynamic_context={"text": 5}),
        _message(1, "user", _text("go"), {"type": "note", "text": "a part of another type"}),
        "junk",  # a file of another kind in the middle: the events after it are still read
        _event("ActionEvent", 2, llm_response_id="", tool_name="grep", tool_call={"id": "c1"}),
        _event("ObservationEvent", 3, tool_call_id="c1", observation={"content": [_text("x")]}),
        _message(4, "user", _text("more"), llm_response_id="r1"),  # a user's: never billed
        _action(5, 5, "c2"),
        _action(6, 5, "c3"),  # a response id that is no id: each call its own reply
        _event("UserRejectObservation", 7, tool_call_id="c2"),
        _event("ObservationEvent", 8, tool_call_id="c3", observation={"content": [_text("y")]}),
        _message(9, "assistant", _text("Done."), llm_response_id="r1"),
    ]
    transcript = _folder(tmp_path, events, [])  # type: ignore[arg-type]
    assert transcript.system == ""
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("user", ("provider", {"type": "note", "text": "a part of another type"})),
        ("assistant", ("use", "c1", "grep", {})),
        ("user", ("result", "c1", "x", False)),
        ("user", ("text", "more")),
        ("assistant", ("use", "c2", "terminal", {"command": "ls"})),
        ("assistant", ("use", "c3", "terminal", {"command": "ls"})),
        ("user", ("result", "c2", "Action rejected: ", True)),
        ("user", ("result", "c3", "y", False)),
        ("assistant", ("text", "Done.")),
    ]
    assert transcript.meta["skipped"] == {"not an OpenHands event (event 2)": 1}
    assert "conversation_id" not in transcript.meta


def test_a_folder_is_a_conversation_only_with_its_state_and_events(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    (folder / "events").mkdir(parents=True)
    assert v1_folder_events(folder) is None  # no base_state.json
    (folder / "base_state.json").write_text("[]")
    assert v1_folder_events(folder) == ([], {})  # a state that is no object: none
    (folder / "events" / "event-00000-0000abcd.json").write_text("{")
    with pytest.raises(MessageFormatError) as raised:
        v1_folder_events(folder)
    assert str(raised.value).startswith(
        f"{folder / 'events' / 'event-00000-0000abcd.json'}: not a readable OpenHands "
        "event file (JSONDecodeError"
    )
    alone = tmp_path / "d"
    alone.mkdir()
    (alone / "base_state.json").write_text("{}")
    assert v1_folder_events(alone) is None  # no events folder


def test_an_observation_whose_content_is_a_string_keeps_it_as_the_results_text(
    tmp_path: Path,
) -> None:
    events = [
        _message(0, "user", _text("go")),
        _action(1, "r1", "c1"),
        _event("ObservationEvent", 2, tool_call_id="c1", observation={"content": "a.py\nb.py"}),
        _action(3, "r2", "c2"),
        _event("ObservationEvent", 4, tool_call_id="c2", observation={"content": "  "}),
    ]
    transcript = _folder(tmp_path, events)
    assert shown(transcript)[2] == ("user", ("result", "c1", "a.py\nb.py", False))
    assert shown(transcript)[4] == ("user", ("result", "c2", "", False))
