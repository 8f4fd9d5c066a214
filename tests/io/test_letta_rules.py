"""Letta agent files written here message by message, each rule of ``ctxlab/io/formats/letta/parse.py`` by the
value a user reads: which documents are agent files (both generations), which agent an episode
opens, the System text and tools, the opening exchange set apart, calls and their returns, parts,
the summary of evicted messages as a compaction, and the census over every agent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.letta.parse import is_letta_agent_file
from tests.io.contracts.letta import CALLS_AND_PARTS, agent_v1, call
from tests.io.shown import added_up, calls, shown

SUMMARY = "Note: prior messages (12 of them) have been hidden from view. Summary: the user wants X."


def test_which_documents_are_agent_files() -> None:
    v1 = agent_v1({"role": "user", "content": "hi"})
    v2 = {"agents": [{"messages": []}], "tools": []}
    assert is_letta_agent_file(v1) and is_letta_agent_file(v2)
    assert detect_format(v1) == "letta" and detect_format(v2) == "letta"
    for bad in (
        None,
        [v1],
        {"messages": []},
        {"messages": {}, "in_context_message_indices": []},
        {"agents": [{"messages": []}], "tools": {}},
        {"agents": [{"name": "a"}], "tools": []},
        {"agents": ["a"], "tools": []},
    ):
        assert not is_letta_agent_file(bad)


def test_an_episode_opens_the_nth_agent_with_a_conversation() -> None:
    tools = [
        {"id": "t1", "name": "a", "json_schema": {"name": "search", "description": "Find."}},
        {"id": "t2", "name": "b", "description": "Bee", "json_schema": {"parameters": {"x": 1}}},
        "junk",
    ]
    user = {"role": "user", "content": "hi"}
    document = {
        "agents": [
            {"name": "empty", "messages": []},
            {
                "name": "first",
                "messages": [user],
                "tool_ids": ["t2"],
                "llm_config": {"model": "m1"},
            },
            "junk",
            {"name": "second", "messages": [user, user, {"role": "user", "content": "x"}]},
        ],
        "tools": tools,
    }
    first = load(document, format="letta", episode=0)
    assert first.meta["agent"] == "first" and first.meta["agents"] == ["first", "second"]
    assert first.meta["version"] == 2 and first.meta["models"] == ["m1"]
    assert [(t.name, t.description, t.input_schema) for t in first.tools] == [
        ("b", "Bee", {"x": 1})
    ]
    census = first.census
    assert census is not None and census.adds_up
    assert census.read == {"user message": 1, "message of another agent": 3}
    assert first.meta["skipped"] == {"another agent's message (episode=N opens it)": 3}
    second = load(document, format="letta", episode=1)
    assert second.meta["agent"] == "second" and "models" not in second.meta
    # No tool ids: every tool of the file.
    assert [(t.name, t.description) for t in second.tools] == [("search", "Find."), ("b", "Bee")]
    plain = load(agent_v1(user, tools=[{"name": "t"}]), format="letta")
    assert [(t.name, t.description) for t in plain.tools] == [("t", "")]
    assert [t.input_schema for t in second.tools] == [{"type": "object"}, {"x": 1}]
    with pytest.raises(MessageFormatError) as raised:
        load(document, format="letta", episode=2)
    assert str(raised.value).endswith(
        "no agent 2 with a conversation (the file holds 3 agents, 2 with messages; "
        "episode= picks one, from 0)"
    )


def test_the_system_text_is_the_in_context_system_message() -> None:
    old = {"id": "m0", "role": "system", "content": "Old system."}
    new = {
        "id": "m1",
        "role": "system",
        "content": [{"type": "text", "text": "New"}, {"type": "text", "text": "system."}],
    }
    user = {"id": "m2", "role": "user", "content": "hi"}
    agent = {"name": "a", "messages": [old, new, user], "in_context_message_ids": ["m1", "m2"]}
    transcript = load({"agents": [agent], "tools": []}, format="letta")
    assert transcript.system == "New\nsystem."
    assert transcript.meta["skipped"] == {"system message (an older copy)": 1}
    assert transcript.meta["in_context_messages"] == 2
    assert transcript.meta["outside_context_window"] == 1
    # Without an in-context list, the first System message; without one, the agent's own.
    v1 = load(agent_v1(old, new, user, indices=[]), format="letta")
    assert v1.system == "Old system." and v1.meta["in_context_messages"] == 0
    assert "outside_context_window" not in v1.meta
    bare = load(agent_v1(user, system="Agent system."), format="letta")
    assert bare.system == "Agent system."
    assert load(agent_v1(user), format="letta").system == ""


def test_a_v1_files_in_context_positions() -> None:
    messages = [
        {"role": "system", "content": "S0"},
        {"role": "system", "content": "S1"},
        {"role": "user", "content": "hi"},
        {"id": "x", "role": "user", "content": "named"},
    ]
    # Positions that are no position (a bool, past the end, negative) are not in the window.
    # A message with an id is named by it in the window.
    transcript = load(agent_v1(*messages, indices=[1, 2, 3, True, 4, 9, -1, "3"]), format="letta")
    assert transcript.system == "S1"
    assert transcript.meta["in_context_messages"] == 3
    assert transcript.meta["outside_context_window"] == 1
    assert transcript.meta["version"] == 1 and transcript.meta["agent"] == ""
    census = transcript.census
    assert census is not None and census.unit == "message"
    with pytest.raises(MessageFormatError, match="an agent's 'messages' must be a list"):
        load({"messages": {}, "in_context_message_indices": []}, format="letta")


def test_calls_returns_and_parts_as_the_model_saw_them() -> None:
    # The agent: `CALLS_AND_PARTS` (tests/io/contracts/letta.py), whose census the contract
    # checks (records read by kind, skipped by reason).
    transcript = load(CALLS_AND_PARTS.source, format="letta")
    assert shown(transcript) == [
        ("user", ("text", "look")),
        ("user", ("image", None, "https://x/a.png")),
        ("user", ("provider", {"type": "image", "source": {"type": "base64", "data": "x"}})),
        (
            "user",
            ("provider", {"type": "image", "source": {"type": "base64", "url": "https://x/b.png"}}),
        ),
        ("user", ("provider", {"type": "image"})),
        ("assistant", ("thinking", "hm", "s")),
        ("assistant", ("thinking", "", "")),
        ("assistant", ("redacted", "ENC")),
        ("assistant", ("use", "c1", "send_message", {"m": "hi"})),
        ("assistant", ("use", "c3", "search", {"q": 1})),
        ("user", ("result", "c1", "sent", False)),
        ("user", ("result", "c3", "found", True)),
    ]
    # The call of nothing is set aside as the file holds it: not unaccounted. The file's
    # inventory knows each of its three thoughts (the redacted one by its data), so a reader
    # that lost one would leave it unaccounted.
    census = added_up(transcript)
    assert census.unaccounted == {} and census.held["reasoning"] == 3


def test_a_call_without_an_id_or_a_name_is_given_them_one_naming_nothing_is_left_out() -> None:
    # Letta's calls are OpenAI's (id, name and arguments required); a file without them is
    # read as far as it names a call: an id made up, the name "tool".
    transcript = load(
        agent_v1(
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call(None, "wait", "{}"), call("c2", None), call(None, None, None)],
            },
            {
                "role": "tool",
                "tool_returns": [
                    {"tool_call_id": "letta_call_1_0", "status": "error"},
                    {"tool_call_id": "c2", "func_response": "done"},
                ],
            },
        ),
        format="letta",
    )
    assert calls(transcript) == {"letta_call_1_0": ("wait", {}), "c2": ("tool", {"m": "hi"})}
    results = [b[1:] for _, b in shown(transcript) if b[0] == "result"]
    assert results == [("letta_call_1_0", "(no output)", True), ("c2", "done", False)]
    census = added_up(transcript)
    assert census.left_out == {"tool call without an id, a name or arguments": 1}
    assert census.unaccounted == {} and census.tool_calls == 2


NAMELESS = "tool call without an id, a name or arguments"


def _skipped_once_between_two_kept(content: object) -> Any:
    """The census of a Letta agent file whose middle message holds ``content`` and a call naming
    nothing: that message skipped once, for the call, between two messages shown."""
    nameless = {"role": "assistant", "content": content, "tool_calls": [call(None, None, None)]}
    transcript = load(
        agent_v1(
            {"role": "user", "content": "hi"}, nameless, {"role": "assistant", "content": "ok"}
        ),
        format="letta",
    )
    assert shown(transcript) == [("user", ("text", "hi")), ("assistant", ("text", "ok"))]
    assert transcript.meta["skipped"] == {NAMELESS: 1}
    return added_up(transcript)


def test_a_message_of_only_a_call_naming_nothing_is_skipped_for_it_once() -> None:
    # Nothing of the message is kept: the record is skipped, for the reason of what it held (the
    # call), and that call is not counted again as a part left out (nor the message as empty).
    census = _skipped_once_between_two_kept("")
    reason = NAMELESS
    assert (census.read, census.used) == (
        {"user message": 1, "assistant message": 2},
        {"user message": 1, "assistant message": 1},
    )
    assert (census.skipped, census.left_out) == ({reason: 1}, {})
    assert census.unaccounted == {} and census.tool_calls == 0


def test_a_call_naming_nothing_beside_parts_none_kept_is_said_once_for_it() -> None:
    # Its other parts are all left out (an image of no address): nothing of the message is
    # kept, as when it held the call alone — skipped once, for the first part left out (the
    # call, read before `add` leaves the image out), and neither part counted again (i67-skip).
    blank = {"type": "image", "source": {"type": "url", "url": ""}}
    census = _skipped_once_between_two_kept([blank])
    reason = NAMELESS
    assert (census.skipped, census.left_out) == ({reason: 1}, {})
    assert census.set_aside == {f"tool call: {reason}": 1, f"reply: {reason}": 1}
    assert census.unaccounted == {}


def test_a_redacted_thought_without_its_data_is_kept_as_letta_wrote_it() -> None:
    # Apart from `CALLS_AND_PARTS`' thoughts: a thought of no words and no data is known to
    # the inventory by that nothing, as an unsigned empty thought is — one of the two lost
    # silently would not show while the other stands.
    assistant = {"role": "assistant", "content": [{"type": "redacted_reasoning"}]}
    transcript = load(agent_v1({"role": "user", "content": "hi"}, assistant), format="letta")
    assert shown(transcript)[1:] == [("assistant", ("provider", {"type": "redacted_reasoning"}))]
    assert added_up(transcript).unaccounted == {}


def test_an_opening_calls_result_among_others_is_left_out() -> None:
    messages = [
        {"role": "assistant", "content": "", "tool_calls": [call("boot")]},
        {"role": "assistant", "content": "", "tool_calls": [call("boot2")]},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [call("c1")]},
        {
            "role": "tool",
            "tool_returns": [
                {"tool_call_id": "boot", "func_response": "late"},
                {"tool_call_id": "boot2", "func_response": "late too"},
                {"tool_call_id": "c1", "func_response": "mine"},
            ],
        },
    ]
    transcript = load(agent_v1(*messages), format="letta")
    results = [b[1:] for _, b in shown(transcript) if b[0] == "result"]
    assert results == [("c1", "mine", False)]
    assert transcript.meta["skipped"]["result of an opening reply's call"] == 2
    # A return's text is its message's, else the return's own response.
    named = load(
        agent_v1(
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "content": "from content", "tool_returns": [{"tool_call_id": "a"}]},
            {"role": "tool", "tool_call_id": "b", "tool_returns": [{"func_response": "fr"}]},
        ),
        format="letta",
    )
    assert [b[1:] for _, b in shown(named) if b[0] == "result"] == [
        ("a", "from content", False),
        ("b", "fr", False),
    ]
    # Without a text or a response, an empty result; without a call id, a result of nothing.
    edges = load(
        agent_v1(
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("a"), call("b"), call("c")],
            },
            {"role": "tool", "tool_call_id": "a", "content": ""},
            {"role": "tool", "content": "", "tool_returns": [{"tool_call_id": "b"}]},
            {"role": "tool", "content": "orphan"},
            {"role": "tool", "tool_returns": [{"tool_call_id": "c"}, {"func_response": "who?"}]},
        ),
        format="letta",
    )
    assert [b[1:] for _, b in shown(edges) if b[0] == "result"] == [
        ("a", "(no output)", False),
        ("b", "(no output)", False),
        ("c", "(no output)", False),
    ]
    # The message whose one result names no call: nothing kept, not an opening call's result —
    # skipped once, for that result (not also as a "message with nothing kept"); the other
    # result naming nothing is a part of a message kept.
    assert edges.meta["skipped"]["tool result without a call id"] == 2
    assert "message with nothing kept" not in edges.meta["skipped"]
    assert edges.census is not None
    assert edges.census.skipped["tool result without a call id"] == 1
    assert edges.census.left_out["tool result without a call id"] == 1
    assert "result of an opening reply's call" not in edges.meta["skipped"]


def test_the_summary_of_evicted_messages_is_a_compaction() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "more"},
        {"role": "user", "content": SUMMARY + " " + "x" * 300},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "prior messages were many"},  # not the summary's words
    ]
    transcript = load(agent_v1(*messages), format="letta")
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {
            "kind": "compact",
            "trigger": "auto",
            "replies_before": 1,
            "summary_head": (SUMMARY + " " + "x" * 300)[:200],
        }
    ]


@settings(database=None, max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=5), st.data())
def test_any_episode_reads_its_own_agent_and_counts_the_others(
    sizes: list[int], data: st.DataObject
) -> None:
    agents = [
        {
            "name": f"a{i}",
            "messages": [{"role": "user", "content": f"{i}-{n}"} for n in range(size)],
        }
        for i, size in enumerate(sizes)
    ]
    talking = [i for i, size in enumerate(sizes) if size]
    document = {"agents": agents, "tools": []}
    if not talking:
        with pytest.raises(MessageFormatError):
            load(document, format="letta", episode=0)
        return
    episode = data.draw(st.integers(0, len(talking) - 1))
    transcript = load(document, format="letta", episode=episode)
    chosen = talking[episode]
    assert transcript.meta["agent"] == f"a{chosen}"
    assert [b[1] for _, b in shown(transcript)] == [f"{chosen}-{n}" for n in range(sizes[chosen])]
    census = added_up(transcript)
    assert sum(census.read.values()) == sum(sizes)
