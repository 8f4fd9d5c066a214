"""ATIF trajectories in (the ``atif`` format) and out (`ctxlab.io.to_atif`).

The import is checked against the test's own count of each file (steps, calls, results, usage:
read from the JSON here, not by the importer); the export against ATIF v1.7's published models
(their JSON Schema, vendored in ``tests/io/atif_schema/``, and their validators, restated in
`atif_problems`) and by reading it back with `ctxlab.load`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import ctxlab
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import to_atif, write_atif
from ctxlab.messages import AssistantMessage, ProviderUsage, ThinkingBlock, ToolUseBlock

FIXTURES = Path(__file__).parents[1] / "fixtures"
ATIF = FIXTURES / "atif"
RFC = ATIF / "rfc_example_v1_4.json"
V17 = ATIF / "harbor_models_v1_7.json"
SCHEMA = json.loads((Path(__file__).parent / "atif_schema" / "atif-v1.7.schema.json").read_text())


def atif_problems(document: dict[str, Any]) -> list[str]:
    """What ATIF v1.7's models refuse in ``document``: the JSON Schema, then the validators the
    schema cannot state (Harbor's ``trajectory.py`` and ``step.py``)."""
    problems = [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(document)]
    for number, step in enumerate(document.get("steps", ()), 1):
        if step.get("step_id") != number:
            problems.append(f"step {number}: step_id {step.get('step_id')}")
        if step.get("source") != "agent":
            for key in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls"):
                if step.get(key) is not None:
                    problems.append(f"step {number}: {key} on a {step.get('source')} step")
            if step.get("metrics") is not None:
                problems.append(f"step {number}: metrics on a {step.get('source')} step")
        if step.get("llm_call_count") == 0 and (
            step.get("metrics") is not None or step.get("reasoning_content") is not None
        ):
            problems.append(f"step {number}: an LLM field on a dispatch step")
        ids = [c["tool_call_id"] for c in step.get("tool_calls") or ()]
        if len(ids) != len(set(ids)):
            problems.append(f"step {number}: a tool_call_id twice")
        for result in (step.get("observation") or {}).get("results", ()):
            call = result.get("source_call_id")
            if call is not None and call not in ids:
                problems.append(f"step {number}: source_call_id {call} names no call of its step")
    return problems


def _steps(path: Path) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = json.loads(path.read_text())["steps"]
    return steps


# --- import -------------------------------------------------------------------------------------


def test_the_specifications_own_example_loads_whole() -> None:
    transcript = ctxlab.load(RFC)
    steps = _steps(RFC)
    census = transcript.census
    assert transcript.meta["source"] == "atif"
    assert census is not None and census.adds_up and census.unaccounted == {}
    assert sum(census.read.values()) == len(steps) == 3
    # Every call of the file, in order, with its arguments; every result answers its call.
    calls = [c for s in steps for c in s.get("tool_calls") or ()]
    uses = [b for m in transcript.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert [(u.id, u.name, u.input) for u in uses] == [
        (c["tool_call_id"], c["function_name"], c["arguments"]) for c in calls
    ]
    results = [r for s in steps for r in (s.get("observation") or {}).get("results", ())]
    answered = [b for m in transcript.messages for b in m.content if b.type == "tool_result"]
    assert [(b.tool_use_id, b.content) for b in answered] == [
        (r["source_call_id"], r["content"]) for r in results
    ]
    # prompt_tokens counts the cached tokens: ctxlab keeps them apart.
    assert list(transcript.usage.values()) == [
        ProviderUsage(520 - 200, 80, 200, 0),
        ProviderUsage(600, 44, 0, 0),
    ]
    thinking = [b.thinking for m in transcript.messages for b in m.content if b.type == "thinking"]
    assert thinking == [s["reasoning_content"] for s in steps if "reasoning_content" in s]
    assert transcript.models == ("gemini-2.5-flash",)
    assert census.set_aside == {"usage: the trajectory's totals (final_metrics)": 1}


def test_a_v1_7_trajectory_reads_its_system_tools_dispatches_and_subagents() -> None:
    transcript = ctxlab.load(V17)
    assert transcript.system == "You are a terminal agent. Solve the task in /app."
    assert [t.name for t in transcript.tools] == ["bash", "delegate"]
    assert transcript.tools[0].input_schema["required"] == ["command"]
    meta = transcript.meta
    assert meta["atif_version"] == "ATIF-v1.7"
    assert meta["trajectory_id"] == "traj-root"
    assert meta["dispatch_steps"] == 1  # step 4: llm_call_count 0
    assert meta["system_steps_as_user"] == 1  # step 5, in the middle of the session
    assert meta["subagent_trajectories"] == 1 and meta["subagent_refs"] == 1
    census = transcript.census
    assert census is not None and census.adds_up and census.unaccounted == {}
    assert census.left_out == {"image part (a file beside the trajectory)": 1}
    # The system event and its observation join the user turn after the delegation's result.
    texts = [b.text for b in transcript.messages[4].content if b.type == "text"]
    assert texts == [
        "Context summarized: 3 earlier steps were replaced by a summary.",
        "Summary: the Makefile names src/util.c, which moved to src/lib/util.c.",
    ]
    # Three billed steps of four agent steps (the dispatch has no metrics).
    assert sorted(u.total_input_tokens for u in transcript.usage.values()) == [2400, 3100, 3300]


def test_an_embedded_subagent_is_an_episode_of_its_own() -> None:
    sub = ctxlab.load(V17, episode=1)
    assert sub.models == ("anthropic/claude-haiku-4-5",)
    assert [m.role for m in sub.messages] == ["user", "assistant"]
    assert list(sub.usage.values()) == [ProviderUsage(900, 12, 0, 0)]
    census = sub.census
    assert census is not None and census.adds_up and census.unaccounted == {}
    with pytest.raises(MessageFormatError, match="episode=0, the trajectory itself, to episode=1"):
        ctxlab.load(V17, episode=2)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"schema_version": "ATIF-v2.0"}, "ATIF schema_version 'ATIF-v2.0' is not one"),
        ({"steps": ["not a step"]}, "step 1: not an object"),
    ],
)
def test_a_trajectory_ctxlab_cannot_read_says_why(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    document = {**json.loads(RFC.read_text()), **change}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    with pytest.raises(MessageFormatError, match=says):
        ctxlab.load(path, format="atif")


def test_a_negative_token_count_is_refused_naming_its_field(tmp_path: Path) -> None:
    document = json.loads(RFC.read_text())
    document["steps"][1]["metrics"]["cached_tokens"] = -5
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    with pytest.raises(MessageFormatError, match="cached_tokens"):
        ctxlab.load(path)


def test_a_model_name_of_another_type_is_no_model(tmp_path: Path) -> None:
    document = json.loads(RFC.read_text())
    document["steps"][1]["model_name"] = ["not", "a", "name"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    assert ctxlab.load(path).models == ("gemini-2.5-flash",)


def test_arguments_written_as_a_json_string_are_read_as_the_object(tmp_path: Path) -> None:
    # Some producers write OpenAI's arguments string, not an object.
    document = json.loads(RFC.read_text())
    document["steps"][1]["tool_calls"][0]["arguments"] = '{"ticker": "GOOGL"}'
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    uses = [b for m in ctxlab.load(path).messages for b in m.content if b.type == "tool_use"]
    assert uses[0].input == {"ticker": "GOOGL"}


# --- export -------------------------------------------------------------------------------------


def test_the_schema_check_refuses_what_the_models_refuse() -> None:
    # The control: the checker must reject, or every "valid" below passes vacuously.
    good = json.loads(RFC.read_text())
    assert atif_problems(good) == []
    for broken in (
        {**good, "steps": [{**good["steps"][0], "step_id": 2}, *good["steps"][1:]]},
        {**good, "steps": [{**good["steps"][0], "metrics": {"prompt_tokens": 1}}]},
        {**good, "agent": {"name": "x"}},  # version is required
        {**good, "steps": [{**good["steps"][0], "colour": "red"}]},  # extra="forbid"
    ):
        assert atif_problems(broken), broken


@pytest.mark.parametrize(
    "path",
    [
        RFC,
        V17,
        FIXTURES / "claude_code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
        FIXTURES / "goose" / "export.json",
        FIXTURES / "codex" / "rollout-current-usage-after.jsonl",
        FIXTURES / "mini_swe_agent" / "toolcalls.traj.json",
    ],
    ids=lambda p: p.name,
)
def test_an_export_is_valid_atif_v1_7_and_reads_back_the_same(path: Path, tmp_path: Path) -> None:
    transcript = ctxlab.load(path)
    document = to_atif(transcript)
    assert document["schema_version"] == "ATIF-v1.7"
    assert atif_problems(document) == []
    back = ctxlab.load(write_atif(transcript, tmp_path / "t.json"))
    assert _held(back.messages) == _held(transcript.messages)
    assert back.usage == transcript.usage
    assert back.system == transcript.system
    assert back.tools == transcript.tools


def test_the_export_adds_up_the_bill_as_atif_counts_it() -> None:
    transcript = ctxlab.load(
        FIXTURES / "claude_code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    )
    document = to_atif(transcript)
    usage = list(transcript.usage.values())
    final = document["final_metrics"]
    assert final["total_prompt_tokens"] == sum(u.total_input_tokens for u in usage)
    assert final["total_cached_tokens"] == sum(u.cache_read_input_tokens for u in usage)
    assert final["total_completion_tokens"] == sum(u.output_tokens for u in usage)
    first = next(s for s in document["steps"] if "metrics" in s)["metrics"]
    assert first == {
        "prompt_tokens": 3 + 17842 + 8165,
        "completion_tokens": 209,
        "cached_tokens": 17842,
        "extra": {"cache_creation_input_tokens": 8165},
    }


def test_compactions_travel_in_the_extension_fields_and_come_back(tmp_path: Path) -> None:
    path = FIXTURES / "opencode" / "export.json"
    transcript = ctxlab.load(path)
    compactions = transcript.meta["compactions"]
    assert compactions, "the fixture records compactions"
    document = to_atif(transcript)
    assert atif_problems(document) == []
    written = document["extra"]["ctxlab"]["compactions"]
    assert [c["replies_before"] for c in written] == [c["replies_before"] for c in compactions]
    marked = [s for s in document["steps"] if "compaction" in s.get("extra", {}).get("ctxlab", {})]
    assert len(marked) == len(compactions)
    back = ctxlab.load(write_atif(transcript, tmp_path / "t.json"))
    assert back.meta["compactions"] == compactions


def test_an_image_travels_as_a_data_url_and_comes_back(tmp_path: Path) -> None:
    transcript = ctxlab.load(FIXTURES / "goose" / "export.json")
    images = [b for m in transcript.messages for b in m.content if b.type == "image"]
    assert images
    document = to_atif(transcript)
    parts = [p for s in document["steps"] if isinstance(s["message"], list) for p in s["message"]]
    assert [p["source"]["path"][:5] for p in parts if p["type"] == "image"] == ["data:"]
    back = ctxlab.load(write_atif(transcript, tmp_path / "t.json"))
    assert [b for m in back.messages for b in m.content if b.type == "image"] == images


def _held(messages: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    """What ATIF holds of ``messages``: a reply's blocks as its step orders them (reasoning,
    text, calls: ATIF keeps them in fields of their own, not interleaved), and a result's
    error flag as a yes or no (ATIF has no "not said")."""
    order = {"redacted_thinking": 0, "thinking": 1, "text": 2, "tool_use": 3}
    held = []
    for message in messages:
        blocks = []
        for block in message.content:
            data = block.model_dump()
            if data["type"] == "tool_result":
                data["is_error"] = bool(data["is_error"])
            blocks.append(data)
        if isinstance(message, AssistantMessage):
            blocks.sort(key=lambda d: order.get(d["type"], 9))
        held.append((message.role, blocks))
    return held


def test_a_thinking_signature_survives_the_trip(tmp_path: Path) -> None:
    transcript = ctxlab.load(
        FIXTURES / "claude_code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    )
    signed = [b for m in transcript.messages for b in m.content if isinstance(b, ThinkingBlock)]
    assert signed and all(b.signature for b in signed)
    back = ctxlab.load(write_atif(transcript, tmp_path / "t.json"))
    again = [b for m in back.messages for b in m.content if isinstance(b, ThinkingBlock)]
    assert [b.signature for b in again] == [b.signature for b in signed]


def test_tool_calls_that_are_not_a_list_are_counted_not_read_as_calls(tmp_path: Path) -> None:
    # A string would otherwise be read a character a call.
    document = json.loads(RFC.read_text())
    document["steps"][1]["tool_calls"] = "financial_search"
    del document["steps"][1]["observation"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    transcript = ctxlab.load(path)
    assert not [b for m in transcript.messages for b in m.content if b.type == "tool_use"]
    census = transcript.census
    assert census is not None and census.left_out == {"tool_calls that is not a list": 1}


def test_an_agent_steps_timestamp_dates_its_reply(tmp_path: Path) -> None:
    transcript = ctxlab.load(RFC)
    # 2025-10-11T10:30:02Z and 10:30:05Z: the two agent steps.
    assert transcript.times == {1: 1760178602.0, 3: 1760178605.0}
    back = ctxlab.load(write_atif(transcript, tmp_path / "t.json"))
    assert back.times == transcript.times
