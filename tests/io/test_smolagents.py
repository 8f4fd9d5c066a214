"""smolagents memory steps (``tests/fixtures/smolagents``, made by the real smolagents 1.26 on a
scripted model): one request per action and planning step, with the step's usage, its calls and
results — checked against the test's own reading of the raw steps —, the System prompt from the
first model input, older steps' token counts, ``write_memory_to_messages()`` output, and hostile
steps refused with a typed error or loaded with their losses counted (the fixtures mutated:
`test_mutated_documents`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.io import detect_format
from ctxlab.io.formats.smolagents.parse import is_smolagents_steps
from ctxlab.messages import ProviderUsage

FOLDER = Path(__file__).parents[1] / "fixtures" / "smolagents"
TOOLS = FOLDER / "tool_calling_steps.json"
CODE = FOLDER / "code_steps.json"


def _raw(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", [TOOLS, CODE], ids=["tool_calling", "code"])
def test_steps_load_as_the_agent_remembers_them(path: Path) -> None:
    steps = _raw(path)
    transcript = load(path)
    assert transcript.meta["source"] == "smolagents"
    calls = [s for s in steps if "step_number" in s or "plan" in s]  # one model call each
    assert sum(m.role == "assistant" for m in transcript.messages) == len(calls)
    expected = [
        ProviderUsage(s["token_usage"]["input_tokens"], s["token_usage"]["output_tokens"])
        for s in calls
    ]
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    ids = [c["id"] for s in steps if "step_number" in s for c in s["tool_calls"]]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == ids
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    assert [r.tool_use_id for r in results] == ids
    errors = [s["error"]["message"] for s in steps if s.get("error")]
    assert [r.text for r in results if r.is_error] == [f"Error:\n{e}" for e in errors]
    system = next(s for s in steps if "step_number" in s)  # a plan's input has its own prompt
    assert transcript.system == system["model_input_messages"][0]["content"][0]["text"]
    task = transcript.messages[0].content[0].text  # type: ignore[union-attr]
    assert task == f"New task:\n{steps[0]['task']}"


def test_a_plan_is_a_reply_then_the_prompt_to_proceed() -> None:
    steps = _raw(TOOLS)
    transcript = load(TOOLS)
    plan = next(s for s in steps if "plan" in s)
    assert transcript.messages[1].content[0].text == plan["plan"]  # type: ignore[union-attr]
    assert transcript.messages[2].content[0].text == "Now proceed and carry out this plan."  # type: ignore[union-attr]


def test_parallel_observations_are_the_first_calls_result() -> None:
    steps = _raw(TOOLS)
    parallel = next(s for s in steps if len(s.get("tool_calls") or ()) > 1)
    results = {
        b.tool_use_id: b.text
        for m in load(TOOLS).messages
        if m.role == "user"
        for b in m.tool_results
    }
    first, second = (c["id"] for c in parallel["tool_calls"])
    assert results[first] == parallel["observations"]
    assert results[second] == "(reported with the first call's result)"


def test_steps_of_before_1_15_count_their_tokens_on_the_step(tmp_path: Path) -> None:
    steps = _raw(CODE)
    for step in steps:
        usage = step.pop("token_usage", None)
        if usage:
            step["input_token_count"] = usage["input_tokens"]
            step["output_token_count"] = usage["output_tokens"]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(steps))
    assert load(path).usage == load(CODE).usage


def test_memory_messages_load_as_the_text_they_are() -> None:
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You are an expert assistant."}]},
        {"role": "user", "content": [{"type": "text", "text": "New task:\nPrice it."}]},
        {
            "role": "tool-call",
            "content": [{"type": "text", "text": "Calling tools:\n[{'id': 'c1'}]"}],
        },
        {"role": "tool-response", "content": [{"type": "text", "text": "Observation:\n0.5"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "0.5"}]},
    ]
    assert detect_format(messages) == "smolagents"
    transcript = load(messages)
    assert transcript.system == "You are an expert assistant."
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([{"task": "go"}, {"step_number": 1}], True),
        ([{"plan": "p"}, {"step_number": 1}], True),
        ([{"task": "go"}, {"plan": "p"}], False),  # steps, but no action step among them
        ([{"task": "go"}, {"step_number": 1}, {"x": 1}], False),
        ([{"task": "go"}, {"step_number": 1}, "junk"], False),
        ([{"step_number": i} for i in range(20)] + ["junk"], True),  # judged on the first 20
        ([{"step_number": i} for i in range(20)] + [{"x": 1}], True),
        ([{"role": "user"}, {"role": "tool-call"}], True),
        ([{"role": "assistant"}, {"role": "tool-response"}], True),
        ([{"role": "user"}, {"role": "assistant"}], False),  # plain chat, no tool roles
        ([{"role": "tool-call"}, {"role": "critic"}], False),
        ([], False),
        ({"step_number": 1}, False),
    ],
)
def test_which_lists_are_smolagents_memory(value: Any, expected: bool) -> None:
    assert is_smolagents_steps(value) is expected
