"""smolagents memory steps written here rule by rule (``ctxlab/io/formats/smolagents/parse.py``), each by the
value a user reads: a task's text and its images left out, a model output given as a list, a
CodeAgent's code as the call's ``code``, calls without ids numbered, an error as the error
result, an action without calls whose observations are the next user text, the usage of a step
that has no reply counted lost, planning steps, a final answer step skipped — and the census of
every file: read = used + skipped, by step class."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage
from tests.io.shown import census_read, shown
from tests.strategies import SETTINGS

TASK = {"task": "Price it.", "task_images": None}


def _action(number: int, **fields: Any) -> dict[str, Any]:
    return {"step_number": number, "model_input_messages": None, **fields}


def _call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_task_is_the_users_turn_and_its_images_are_left_out() -> None:
    transcript = load(
        [
            {"task": "Read this chart.", "task_images": ["<img1>", "<img2>"]},
            _action(1, model_output="ok"),
        ],
        format="smolagents",
    )
    assert shown(transcript)[0] == ("user", ("text", "New task:\nRead this chart."))
    assert transcript.meta["skipped"] == {"task image": 2}
    assert transcript.census.left_out == {"task image": 2}


def test_a_codeagents_call_holds_its_code_and_other_calls_their_arguments() -> None:
    steps = [
        TASK,
        _action(
            1,
            model_output=[{"type": "text", "text": "Thought: café"}],  # a list of parts: as JSON
            tool_calls=[
                _call("python_interpreter", "print(1 + 1)"),
                _call("search", ' \n {"query": "apples"}', "c2"),  # JSON after white space
                _call("lookup", {"key": "pear"}, "c3"),
                _call("free_text", "just words", "c4"),
            ],
            observations="2",
        ),
    ]
    blocks = shown(load(steps, format="smolagents"))
    assert blocks[1] == ("assistant", ("text", '[{"type": "text", "text": "Thought: café"}]'))
    assert [b[1][1:] for b in blocks if b[1][0] == "use"] == [
        ("smolagents_call_1", "python_interpreter", {"code": "print(1 + 1)"}),
        ("c2", "search", {"query": "apples"}),
        ("c3", "lookup", {"key": "pear"}),
        ("c4", "free_text", {"arguments": "just words"}),
    ]
    assert [b[1][1:] for b in blocks if b[1][0] == "result"] == [
        ("smolagents_call_1", "2", False),
        ("c2", "(reported with the first call's result)", False),
        ("c3", "(reported with the first call's result)", False),
        ("c4", "(reported with the first call's result)", False),
    ]


def test_calls_without_ids_are_numbered_across_the_steps() -> None:
    steps = [
        TASK,
        _action(1, model_output="a", tool_calls=[_call("t", "{}")], observations="1"),
        _action(2, model_output="b", tool_calls=[_call("t", "{}"), _call("t", "{}")]),
        _action(3, model_output="c", tool_calls=[{"function": {}}], observations=None),
    ]
    uses = [b[1][1:3] for b in shown(load(steps, format="smolagents")) if b[1][0] == "use"]
    assert uses == [
        ("smolagents_call_1", "t"),
        ("smolagents_call_2", "t"),
        ("smolagents_call_3", "t"),
        ("smolagents_call_4", "tool"),  # no name: said as a tool
    ]


def test_an_error_is_the_calls_error_result() -> None:
    steps = [
        TASK,
        _action(
            1,
            model_output="x",
            tool_calls=[_call("t", "{}", "c1")],
            observations="partial output",
            error={"type": "AgentExecutionError", "message": "it failed"},
        ),
        _action(2, model_output="y", tool_calls=[_call("t", "{}", "c2")], error={"type": "E"}),
    ]
    results = [b[1][1:] for b in shown(load(steps, format="smolagents")) if b[1][0] == "result"]
    assert results == [("c1", "Error:\nit failed", True), ("c2", "Error:\n{'type': 'E'}", True)]


def test_an_action_without_calls_is_a_reply_and_its_observations_the_users_next_text() -> None:
    steps = [
        TASK,
        _action(1, model_output="  I will think.  ", observations="Nothing ran."),
        _action(2, model_output="Done.", observations="   "),  # nothing observed: no turn
        _action(3, model_output="Still?", error={"message": "no code found"}),
    ]
    assert shown(load(steps, format="smolagents")) == [
        ("user", ("text", "New task:\nPrice it.")),
        ("assistant", ("text", "I will think.")),
        ("user", ("text", "Nothing ran.")),
        ("assistant", ("text", "Done.")),
        ("assistant", ("text", "Still?")),
        ("user", ("text", "Error:\nno code found")),
    ]


def test_observation_images_are_left_out() -> None:
    steps = [TASK, _action(1, model_output="look", observations_images=["a", "b", "c"])]
    transcript = load(steps, format="smolagents")
    assert transcript.census.left_out == {"observation image": 3}


def test_the_usage_of_a_step_without_a_model_output_is_counted_lost() -> None:
    steps = [
        TASK,
        _action(1, model_output="  ", token_usage={"input_tokens": 700, "output_tokens": 3}),
        _action(2, model_output="kept", token_usage={"input_tokens": 800, "output_tokens": 9}),
        _action(3, model_output=None),
    ]
    transcript = load(steps, format="smolagents")
    assert list(transcript.usage.values()) == [ProviderUsage(800, 9)]
    census = transcript.census
    assert census.usage_lost == {"on a step without a model output": 1}
    assert census.skipped == {"step without a model output": 2}
    assert census.read == {"TaskStep": 1, "ActionStep": 3}
    assert census.used == {"TaskStep": 1, "ActionStep": 1}
    assert census.usage_read == 2 and census.usage_placed == 1


def test_a_plan_is_a_reply_with_its_usage_and_an_empty_plan_is_left_out() -> None:
    steps = [
        TASK,
        {"plan": "1. price\n2. sum", "token_usage": {"input_tokens": 50, "output_tokens": 7}},
        {"plan": "", "input_token_count": 60, "output_token_count": 0},
        _action(1, model_output="ok"),
        {"plan": "3. check"},
    ]
    transcript = load(steps, format="smolagents")
    assert shown(transcript) == [
        ("user", ("text", "New task:\nPrice it.")),
        ("assistant", ("text", "1. price\n2. sum")),
        ("user", ("text", "Now proceed and carry out this plan.")),
        ("user", ("text", "Now proceed and carry out this plan.")),  # after the empty plan too
        ("assistant", ("text", "ok")),
        ("assistant", ("text", "3. check")),
        ("user", ("text", "Now proceed and carry out this plan.")),
    ]
    assert transcript.usage == {1: ProviderUsage(50, 7)}
    assert transcript.census.left_out == {"empty plan": 1}
    assert transcript.census.usage_lost == {"on a reply with nothing kept": 1}


def test_a_final_answer_step_and_an_unknown_step_are_skipped_and_counted() -> None:
    steps = [TASK, _action(1, model_output="3.0"), {"output": 3.0}, {"output": 3}, {"x": "y"}]
    transcript = load(steps, format="smolagents")
    assert len(transcript.messages) == 2
    assert transcript.census.read == {
        "TaskStep": 1,
        "ActionStep": 1,
        "FinalAnswerStep": 2,
        "unknown step": 1,
    }
    assert transcript.census.skipped == {
        "final answer step (its call holds the answer)": 2,
        "unknown step": 1,
    }


def test_the_system_prompt_is_the_first_action_steps_and_not_a_plans() -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "You are an agent."}]}
    planning = {"role": "system", "content": [{"type": "text", "text": "You plan."}]}
    steps = [
        TASK,
        {"plan": "p", "model_input_messages": [planning]},
        _action(1, model_output="a", model_input_messages=[{"role": "user", "content": "x"}]),
        _action(1, model_output="a", model_input_messages=[{"role": "system", "content": []}]),
        _action(2, model_output="b", model_input_messages=[system]),
        _action(3, model_output="c", model_input_messages=[{**system, "content": "Other."}]),
    ]
    assert load(steps, format="smolagents").system == "You are an agent."


def test_a_step_that_is_not_an_object_is_refused_naming_it() -> None:
    with pytest.raises(
        MessageFormatError, match=r"step 1: not an object \(a smolagents memory step\)"
    ):
        load([TASK, "junk", _action(1, model_output="a")], format="smolagents")
    with pytest.raises(
        MessageFormatError, match=r"message 1: expected a role of assistant, system"
    ):
        load([{"role": "user", "content": "a"}, {"role": "critic"}], format="smolagents")


def test_memory_messages_census_and_system() -> None:
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "One."}]},
        {"role": "system", "content": [{"type": "text", "text": "Two."}]},
        {"role": "user", "content": [{"type": "text", "text": "New task:\nGo."}]},
        {"role": "tool-call", "content": [{"type": "text", "text": "Calling tools: x"}]},
        {"role": "tool-response", "content": [{"type": "text", "text": "Observation: 1"}]},
        {"role": "assistant", "content": []},
    ]
    transcript = load(messages, format="smolagents")
    assert transcript.system == "One.\n\nTwo."
    assert [(role, block[1]) for role, block in shown(transcript)] == [
        ("user", "New task:\nGo."),
        ("assistant", "Calling tools: x"),
        ("user", "Observation: 1"),
    ]
    census = census_read(
        transcript,
        "message",
        read={
            "system message": 2,
            "user message": 1,
            "tool-call message": 1,
            "tool-response message": 1,
            "assistant message": 1,
        },
    )
    assert census.skipped == {"empty message": 1}
    assert sum(census.used.values()) == 5


_STEP = st.one_of(
    st.builds(lambda t: {"task": t}, st.text(max_size=5)),
    st.builds(
        lambda o, n, obs: _action(
            1,
            model_output=o,
            tool_calls=[_call("t", "{}", None) for _ in range(n)],
            observations=obs,
            token_usage={"input_tokens": 5, "output_tokens": 1},
        ),
        st.sampled_from([None, "", "  ", "out"]),
        st.integers(0, 2),
        st.sampled_from([None, "", "seen"]),
    ),
    st.builds(lambda p: {"plan": p}, st.sampled_from(["", "plan"])),
    st.just({"output": 1}),
    st.just({"other": 1}),
)


@SETTINGS
@given(st.lists(_STEP, min_size=1, max_size=8).map(lambda s: [TASK, *s]))
def test_every_step_is_read_and_used_or_skipped(steps: list[dict[str, Any]]) -> None:
    census = load(steps, format="smolagents").census
    assert sum(census.read.values()) == len(steps)
    assert sum(census.used.values()) + sum(census.skipped.values()) == len(steps)
    # Each usage a step reports lands on its reply or is counted lost.
    reported = sum("token_usage" in s for s in steps)
    assert census.usage_read == reported


def test_token_counts_missing_or_null_are_zero_and_none_at_all_no_bill() -> None:
    counts = [
        {"token_usage": {"input_tokens": None, "output_tokens": 5}},
        {"token_usage": {"input_tokens": 7, "output_tokens": None}},
        {"input_token_count": 40},  # before smolagents 1.15: on the step
        {"output_token_count": 3},
        {"input_token_count": None, "output_token_count": None},
    ]
    steps = [
        TASK,
        *(_action(n, model_output="a", observations="b", **c) for n, c in enumerate(counts)),
    ]
    usage = load(steps, format="smolagents").usage
    assert list(usage.values()) == [
        ProviderUsage(0, 5),
        ProviderUsage(7, 0),
        ProviderUsage(40, 0),
        ProviderUsage(0, 3),
    ]  # the step that counts nothing at all is no bill
    assert sorted(usage) == [1, 3, 5, 7]


def test_an_empty_task_and_a_session_without_a_system_prompt() -> None:
    transcript = load([{"task": None}, {"plan": "p"}], format="smolagents")
    assert shown(transcript)[0] == ("user", ("text", "New task:\n"))
    assert transcript.system == ""


def test_what_holds_no_conversation_is_refused_saying_what_was_read() -> None:
    with pytest.raises(MessageFormatError) as caught:
        load([{"step_number": 1}, {"output": 1}], format="smolagents")
    assert str(caught.value).startswith("<data>: no messages (read 2 steps: 0 used, 2 skipped")
    with pytest.raises(MessageFormatError) as caught:
        load(
            [{"role": "system", "content": "s"}, {"role": "user", "content": ""}],
            format="smolagents",
        )
    assert str(caught.value).startswith("<data>: no messages (read 2 messages: 1 used, 1 skipped")
