"""Inspect AI logs written here sample by sample, each rule of ``ctxlab/io/formats/inspect/parse.py`` (past the
zip) by the value a user reads: which documents are logs, which sample an episode opens, each
message as the model saw it, each reply's usage from the model call that produced it (by message
id, else by rank), a sample read from its events alone, and the census of messages and events."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.inspect.parse import is_inspect_log
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, billed, census_read, shown


def _log(*samples: Any, status: str = "success") -> dict[str, Any]:
    return {"version": 2, "status": status, "eval": {"task": "t"}, "samples": list(samples)}


def _model(reply: Any = None, usage: Any = None, **event: Any) -> dict[str, Any]:
    output: dict[str, Any] = {"choices": [{"message": reply}] if reply is not None else []}
    if usage is not None:
        output["usage"] = usage
    return {"event": "model", "output": output, **event}


def _usage(input: int, output: int, read: int = 0, write: int = 0) -> dict[str, int]:
    return {
        "input_tokens": input,
        "output_tokens": output,
        "input_tokens_cache_read": read,
        "input_tokens_cache_write": write,
    }


def _load(sample: dict[str, Any], episode: int = 0) -> Any:
    return load(_log(sample), format="inspect", episode=episode)


def _chat(*turns: tuple[str, str | None, str]) -> list[dict[str, Any]]:
    """A sample's messages: per turn ``(question, the reply's id or None, the reply)`` a user
    message and the assistant's reply (with that id, where there is one)."""
    messages: list[dict[str, Any]] = []
    for question, id, reply in turns:
        answer = {"role": "assistant", "content": reply}
        messages += [
            {"role": "user", "content": question},
            answer if id is None else {"id": id, **answer},
        ]
    return messages


def test_which_documents_are_logs() -> None:
    log = _log()
    assert is_inspect_log(log) and detect_format(log) == "inspect"
    assert is_inspect_log({"eval": {}, "status": "started", "version": 2})
    assert is_inspect_log({"eval": {}, "status": "success", "samples": []})
    for bad in (
        None,
        [log],
        {"eval": "t", "status": "x", "samples": []},
        {"eval": {}, "samples": []},
        {"eval": {}, "status": "x"},
    ):
        assert not is_inspect_log(bad)


def test_a_log_without_samples_is_refused_saying_why() -> None:
    with pytest.raises(MessageFormatError) as raised:
        load(_log("junk", status="started"), format="inspect")
    assert str(raised.value).endswith(
        "the Inspect log holds no samples (status 'started'); log with samples"
    )


def test_each_message_as_the_model_saw_it() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": ""},
        {"role": "system", "content": [{"type": "text", "text": "Use tools."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "text", "text": " "},
                {"type": "text", "text": 5},
                "junk",
                {"type": "image", "image": "data:image/png;base64,iVBORw0KGgo="},
                {"type": "audio", "audio": "x"},
            ],
        },
        {"role": "user", "content": "  "},
        {"role": "user", "content": 5},
        {"role": "user", "content": [{"type": "video", "image": "not an image part"}]},
        {
            "role": "assistant",
            "model": "m1",
            "content": [
                {"type": "reasoning", "reasoning": "hm", "signature": "s"},
                {"type": "reasoning", "reasoning": "ENC", "redacted": True},
                {"type": "reasoning"},
            ],
            "tool_calls": [
                {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}},
                {"arguments": "raw"},
                "junk",
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "tool", "tool_call_id": "inspect_7", "content": "", "error": {"message": "boom"}},
        {"role": "tool", "content": "whose?"},
        {"role": "assistant", "model": "m2", "content": ""},
        {"role": "assistant", "model": "m1", "content": "Done."},
        {"role": "critic", "content": "x"},
    ]
    transcript = _load({"id": "s1", "epoch": 2, "messages": messages})
    assert transcript.system == "Be brief.\n\nUse tools."
    assert shown(transcript) == [
        ("user", ("text", "look")),
        ("user", ("provider", {"type": "text", "text": 5})),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("provider", {"type": "audio", "audio": "x"})),
        ("user", ("provider", {"type": "video", "image": "not an image part"})),
        ("assistant", ("thinking", "hm", "s")),
        ("assistant", ("redacted", "ENC")),
        ("assistant", ("thinking", "", "")),
        ("assistant", ("use", "c1", "bash", {"cmd": "ls"})),
        ("assistant", ("use", "inspect_7", "tool", {"arguments": "raw"})),
        ("user", ("result", "c1", "a.py", False)),
        ("user", ("result", "inspect_7", "boom", True)),
        ("assistant", ("text", "Done.")),
    ]
    meta = transcript.meta
    assert meta["id"] == "s1" and meta["epoch"] == 2 and meta["models"] == ["m1", "m2"]
    census_read(
        transcript,
        "record",
        read={
            "system message": 3,
            "user message": 4,
            "assistant message": 3,
            "tool message": 3,
            "critic message": 1,
        },
        skipped={
            "message with nothing kept": 2,  # two user messages
            "tool result without a call id": 1,  # a message of only it: skipped once, for it
            "empty reply": 1,
            "critic message": 1,
        },
    )


@pytest.mark.parametrize(
    ("error", "text"),
    [
        ({"message": "boom", "type": "timeout"}, "boom"),
        ({"type": "timeout"}, "timeout"),
        ({}, "error"),
    ],
)
def test_a_tool_error_without_output_says_what_failed(error: Any, text: str) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": "f"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "", "error": error},
    ]
    results = [b for _, b in shown(_load({"messages": messages})) if b[0] == "result"]
    assert results == [("result", "c1", text, True)]
    # Output beside the error is the result's text.
    messages[2]["content"] = "partial"
    results = [b for _, b in shown(_load({"messages": messages})) if b[0] == "result"]
    assert results == [("result", "c1", "partial", True)]


def test_a_message_that_is_no_object_is_refused_naming_it() -> None:
    with pytest.raises(MessageFormatError) as raised:
        _load({"messages": [{"role": "user", "content": "hi"}, "junk"]})
    assert str(raised.value).endswith("message 1: not an object")


def test_each_replys_usage_is_its_model_calls_by_id() -> None:
    # No call has the third reply's id.
    messages = _chat(("go", "r1", "one"), ("more", "r2", "two"), ("again", "r9", "three"))
    events = [
        {"event": "sample_init"},
        _model({"id": "r2"}, _usage(200, 20, 50, 5)),
        _model({"id": "r1"}, _usage(100, 10)),
        _model({"id": "r7"}, _usage(300, 30)),  # a call whose reply the sample does not hold
        _model({"id": "r8"}),  # no usage: nothing to lose
        "junk",
    ]
    transcript = _load({"messages": messages, "events": events})
    assert transcript.usage == {1: ProviderUsage(100, 10), 3: ProviderUsage(200, 20, 50, 5)}
    census = added_up(transcript)
    assert census.usage_lost == {"a model call whose reply is not in the sample's messages": 1}
    assert census.read["event model"] == 4 and census.read["event sample_init"] == 1
    assert census.read["event None"] == 1
    assert transcript.meta["skipped"] == {"event sample_init": 1, "event None": 1}


def test_without_message_ids_the_calls_go_to_the_replies_by_rank() -> None:
    # One reply more than calls.
    turns = [("go", "one"), ("more", "two"), ("again", "three"), ("last", "four")]
    messages = _chat(*[(question, None, reply) for question, reply in turns])
    events = [
        _model({"content": "one"}, _usage(100, 10)),
        _model({"id": 5, "content": "x"}, _usage(200, 20)),  # an id that is no id: by rank
        _model({"content": "x"}, _usage(300, 30)),
        {"event": "model", "output": {"choices": {"0": "not a list"}}},
    ]
    transcript = _load({"messages": messages, "events": events})
    billed(
        transcript,
        {
            1: ProviderUsage(100, 10),
            3: ProviderUsage(200, 20),
            5: ProviderUsage(300, 30),
        },
    )


def test_a_call_claimed_twice_bills_its_first_reply_only() -> None:
    messages = _chat(("go", "r1", "one"), ("more", "r1", "one again"))
    transcript = _load({"messages": messages, "events": [_model({"id": "r1"}, _usage(9, 1))]})
    assert transcript.usage == {1: ProviderUsage(9, 1)}


@pytest.mark.parametrize(
    "field",
    ["input_tokens", "output_tokens", "input_tokens_cache_read", "input_tokens_cache_write"],
)
def test_a_usage_figure_that_is_no_count_is_refused_by_name(field: str) -> None:
    usage: dict[str, Any] = _usage(1, 1)
    usage[field] = "many"
    sample = {"messages": [{"role": "user", "content": "x"}], "events": [_model({}, usage)]}
    with pytest.raises(MessageFormatError, match=f"usage field '{field}' is 'many'"):
        _load(sample)


def test_a_sample_logged_with_its_events_alone() -> None:
    pool = [
        {"role": "system", "content": "S."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "second"},
    ]
    reply = {"id": "r2", "role": "assistant", "content": "b"}
    events = [
        _model(
            {"id": "r1", "role": "assistant", "content": "a"}, _usage(5, 1), input_refs=[[0, 2]]
        ),
        # Newer logs: the input as ranges of the sample's pool; a bad range adds nothing.
        _model(reply, _usage(8, 2), input_refs=[[0, 1], [1, 4], [3, "x"], [5], "junk", [-3, 0]]),
        {"event": "model", "output": {}, "input": []},  # neither input nor reply: not the last
    ]
    transcript = _load({"events": events, "events_data": {"messages": pool}, "messages": []})
    assert transcript.meta["read_from"] == "events"
    assert transcript.system == "S."
    assert [b[1] for _, b in shown(transcript)] == ["first", "a", "second", "b"]
    # The last call's reply has its usage; the first call's reply has no id in the input's "a".
    assert transcript.usage[3] == ProviderUsage(8, 2)
    # A call's own input list comes before the pool.
    own = _model(reply, None, input=[{"role": "user", "content": "own"}], input_refs=[[0, 4]])
    read = _load({"events": [own], "events_data": {"messages": pool}})
    assert [b[1] for _, b in shown(read)] == ["own", "b"]
    # The last call that holds either: its input alone when it got no reply.
    unanswered = _model(None, None, input=[{"role": "user", "content": "asked"}])
    asked = _load({"events": [own, unanswered, {"event": "model", "output": {}}]})
    assert [b[1] for _, b in shown(asked)] == ["asked"]
    census = asked.census
    assert census is not None and census.read == {"user message": 1, "event model": 3}
    # Neither messages nor a model call that holds them: refused, saying what to log.
    with pytest.raises(MessageFormatError) as raised:
        load(_log({"events": [{"event": "model", "output": {}}]}), format="inspect")
    assert str(raised.value) == (
        "<data> sample 0: an Inspect sample needs its 'messages', or 'model' events that hold them; "
        "this one has neither — log the eval with its samples' messages"
    )


def test_an_episode_opens_the_sample_of_that_rank() -> None:
    samples = [
        {"id": f"s{i}", "messages": [{"role": "user", "content": f"q{i}"}]} for i in range(3)
    ]
    for episode in range(3):
        transcript = load(_log(*samples), format="inspect", episode=episode)
        assert transcript.meta["id"] == f"s{episode}"


@settings(database=None, max_examples=40, deadline=None)
@given(st.permutations(list(range(5))), st.integers(1, 5))
def test_usage_follows_the_ids_whatever_the_calls_order(order: list[int], n: int) -> None:
    messages: list[Any] = []
    for i in range(n):
        messages += [
            {"role": "user", "content": f"q{i}"},
            {"id": f"r{i}", "role": "assistant", "content": f"a{i}"},
        ]
    events = [_model({"id": f"r{i}"}, _usage(100 + i, i)) for i in order]
    transcript = _load({"messages": messages, "events": events})
    assert transcript.usage == {2 * i + 1: ProviderUsage(100 + i, i) for i in range(n)}
    census = added_up(transcript)
    lost = census.usage_lost.get("a model call whose reply is not in the sample's messages", 0)
    assert lost == 5 - n
