"""OpenHands event histories written here event by event, each rule of ``ctxlab/io/formats/openhands/events.py``
by the value a user reads: which documents are histories, the instance an episode opens, the
user's and the agent's messages, each function-call action a call (its thought the reply's text)
with its model response's usage counted once, each observation the result of its call, and the
events skipped by name."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.openhands.events import is_openhands_events, openhands_events_of
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, billed, census_in, shown

PNG = "data:image/png;base64,iVBORw0KGgo="


def _user(content: str, **args: Any) -> dict[str, Any]:
    return {"id": 0, "source": "user", "action": "message", "args": {"content": content, **args}}


def _act(event_id: int, call_id: Any, response: Any = None, **args: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"function_name": "execute_bash", "tool_call_id": call_id}
    if response is not None:
        meta["model_response"] = response
    return {
        "id": event_id,
        "source": "agent",
        "action": "run",
        "args": args,
        "tool_call_metadata": meta,
    }


def _obs(cause: Any, content: Any, kind: str = "run", **extra: Any) -> dict[str, Any]:
    return {
        "source": "environment",
        "observation": kind,
        "cause": cause,
        "content": content,
        **extra,
    }


def _response(response_id: str, prompt: int, completion: int) -> dict[str, Any]:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    return {"id": response_id, "usage": usage}


def test_which_documents_are_histories() -> None:
    events = [_user("hi"), {"source": "agent", "observation": "x"}]
    assert is_openhands_events(events) and detect_format(events) == "openhands"
    assert is_openhands_events({"history": events})
    for bad in (
        None,
        [],
        {"history": []},
        {"history": ["x"]},
        [{"source": "system", "action": "x"}],
        [{"source": "user"}],
        [_user("hi"), "x"],
    ):
        assert not is_openhands_events(bad)
    # Only the first five events are looked at.
    assert is_openhands_events([_user("hi")] * 5 + ["x"])


def test_an_episode_opens_an_instance_of_an_output() -> None:
    output = [
        {
            "instance_id": "a",
            "history": [_user("first")],
            "metadata": {"llm_config": {"model": "m"}},
        },
        {"instance_id": "b", "history": [_user("second")]},
    ]
    first = load(output, format="openhands", episode=0)
    assert first.meta["instance_id"] == "a" and first.meta["models"] == ["m"]
    assert load(output[:1], format="openhands").meta["instance_id"] == "a"  # one instance
    second = load(output, format="openhands", episode=1)
    assert second.meta["instance_id"] == "b" and "models" not in second.meta
    assert [b[1] for _, b in shown(second)] == ["second"]
    with pytest.raises(MessageFormatError) as raised:
        load(output, format="openhands", episode=2)
    assert str(raised.value).endswith("no instance 2 (the file holds 2)")
    # (load refuses these before: the reader's own words, for a caller of it.)
    with pytest.raises(MessageFormatError) as refused:
        openhands_events_of({"history": {}}, "out.json", 0)
    assert str(refused.value) == "out.json: an OpenHands output needs a 'history' list of events"
    with pytest.raises(MessageFormatError, match="a list of events or an object with 'history'"):
        openhands_events_of("x", "out.json", 0)
    assert openhands_events_of([], "out.json", 0) == ([], {})
    with pytest.raises(MessageFormatError) as raised:
        load({"history": [_user("hi"), "junk"]}, format="openhands")
    assert str(raised.value).endswith("event 1: not an object")


def test_each_event_as_the_model_saw_it() -> None:
    first = _response("resp-1", 100, 10)
    events = [
        {"id": 0, "source": "environment", "action": "system", "args": {}},
        _user("fix it", image_urls=[PNG, "", 5]),
        {"id": 1, "source": "user", "action": "message", "message": "said", "args": {}},
        {"id": 2, "source": "user", "action": "message", "args": {"content": " "}},
        {"id": 2, "source": "user", "action": "message", "args": {"image_urls": "not a list"}},
        _act(3, "call_1", first, thought="Looking.", command="ls"),
        _act(4, "call_2", first, command="pwd"),  # the same response's second call
        _act(5, None, _response("resp-2", 200, 20), thought=" ", command="cat"),
        _obs(3, "a.py"),
        _obs(4, None, kind="error"),
        _obs(5, 7),
        _obs(99, "late", tool_call_metadata={"tool_call_id": "call_x"}),
        _obs(98, "nobody's", kind="agent_state_changed"),
        {"id": 6, "source": "agent", "action": "message", "args": {"content": "Done."}},
        {"id": 7, "source": "agent", "action": "finish", "args": {"final_thought": "Fixed."}},
        {"id": 8, "source": "agent", "action": "message", "message": "msg", "args": {}},
        {"id": 9, "source": "agent", "action": "finish", "args": {}},
        {"id": 10, "source": "agent", "action": "think", "args": {"thought": "x"}},
    ]
    transcript = load(events, format="openhands")
    assert shown(transcript) == [
        ("user", ("text", "fix it")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("text", "said")),
        ("assistant", ("text", "Looking.")),
        ("assistant", ("use", "call_1", "execute_bash", {"command": "ls"})),
        ("assistant", ("use", "call_2", "execute_bash", {"command": "pwd"})),
        ("assistant", ("use", "openhands_5", "execute_bash", {"command": "cat"})),
        ("user", ("result", "call_1", "a.py", False)),
        ("user", ("result", "call_2", "", True)),
        ("user", ("result", "openhands_5", "7", False)),
        ("assistant", ("text", "Done.")),
        ("assistant", ("text", "Fixed.")),
        ("assistant", ("text", "msg")),
    ]
    # An observation naming a call by its metadata answers it; a call never made, none.
    assert transcript.meta["repairs"] == ["dropped tool_result for unknown id 'call_x'"]
    # Three calls in one turn: the later response's usage replaces the earlier's, counted.
    assert transcript.usage == {1: ProviderUsage(200, 20)}
    census = census_in(transcript, "event")
    assert transcript.meta["skipped"] == {
        "environment system action": 1,
        "message with nothing kept": 2,
        "agent_state_changed observation": 1,
        "empty message": 1,
        "agent think action": 1,
    }
    assert census.read["agent run action"] == 3 and census.read["run observation"] == 3
    assert census.usage_lost == {"replaced: replies merged in a turn": 1}


def test_a_responses_usage_is_counted_once_over_its_calls() -> None:
    events = [
        _user("go"),
        _act(1, "c1", _response("r1", 100, 10), command="a"),
        _act(2, "c2", _response("r1", 100, 10), command="b"),
        _obs(1, "A"),
        _obs(2, "B"),
        _act(3, "c3", _response("r2", 150, 5), command="c"),
        _obs(3, "C"),
        _act(4, "c4", {"usage": {"prompt_tokens": 1}}, command="d"),  # no id: one of its own
    ]
    transcript = load(events, format="openhands")
    billed(
        transcript,
        {
            1: ProviderUsage(100, 10),
            3: ProviderUsage(150, 5),
            5: ProviderUsage(1, 0),
        },
    )


def test_a_call_is_named_by_its_function_else_its_action() -> None:
    action = _act(1, "c1", None, command="ls")
    action["tool_call_metadata"] = {"tool_call_id": "c1"}
    bare = {**action, "id": 2, "action": None, "tool_call_metadata": {"tool_call_id": "c2"}}
    transcript = load([_user("go"), action, bare], format="openhands")
    uses = [b for _, b in shown(transcript) if b[0] == "use"]
    assert [(u[1], u[2]) for u in uses] == [("c1", "run"), ("c2", "tool")]


def test_an_observations_images_and_screenshot() -> None:
    extras = {"image_urls": [PNG], "screenshot": "base64…"}
    events = [
        _user("go"),
        _act(1, "c1", None, url="x"),
        _obs(1, "page", kind="browse", extras=extras),
    ]
    transcript = load(events, format="openhands")
    (result,) = [b for m in transcript.messages for b in m.content if b.type == "tool_result"]
    assert [p.type for p in result.content] == ["text", "image"]  # type: ignore[union-attr]
    assert result.text == "page"
    assert transcript.meta["skipped"] == {"screenshot": 1}


@settings(database=None, max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["same", "new"]), min_size=1, max_size=6))
def test_every_response_is_billed_once(kinds: list[str]) -> None:
    # Calls made by one response share its usage: it is placed once, on the first of them.
    events: list[Any] = [_user("go")]
    response = 0
    for i, kind in enumerate(kinds):
        if kind == "new" or i == 0:
            response += 1
        events += [_act(i, f"c{i}", _response(f"r{response}", 10 * response, response), n=i)]
        events += [_obs(i, f"out {i}")]
    transcript = load(events, format="openhands")
    assert sorted(u.input_tokens for u in transcript.usage.values()) == [
        10 * r for r in range(1, response + 1)
    ]
    added_up(transcript)
