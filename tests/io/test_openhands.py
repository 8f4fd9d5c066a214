"""OpenHands event histories: an evaluation's output.jsonl and a trajectory export
(tests/fixtures/openhands, written from OpenHands' own serialization)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.io import detect_format, load
from ctxlab.messages import ProviderUsage, find_tool_pair_problems

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openhands"


@pytest.mark.parametrize("name", ["output.jsonl", "trajectory.json"])
def test_an_event_history_loads_with_its_calls_and_observations(name: str) -> None:
    transcript = load(FIXTURES / name)
    assert transcript.meta["source"] == "openhands"
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert [(u.id, u.name) for u in uses] == [
        ("toolu_A", "execute_bash"),
        ("toolu_B", "str_replace_editor"),
        ("toolu_C", "finish"),
    ]
    assert uses[0].input["command"] == "cat pager.py" and "thought" not in uses[0].input
    assert transcript.messages[1].content[0].text == "Let me look at the file."  # type: ignore[union-attr]
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert results[0].tool_use_id == "toolu_A" and "return n // size" in results[0].text
    assert find_tool_pair_problems(transcript.messages) == []
    assert list(transcript.usage.values()) == [
        ProviderUsage(3_000, 40, 0),
        ProviderUsage(300, 60, 3_000),
        ProviderUsage(200, 30, 3_300),
    ]
    others = {"another instance (episode=N opens it)": 1} if name == "output.jsonl" else {}
    assert transcript.meta["skipped"] == {
        "agent system action": 1,
        "recall observation": 1,
        "agent_state_changed observation": 1,
        **others,
    }


def test_an_edits_body_and_a_messages_images_are_kept(tmp_path: Path) -> None:
    events = json.loads((FIXTURES / "trajectory.json").read_text())
    edit = next(e for e in events if e.get("action") and e.get("tool_call_metadata"))
    edit["args"]["content"] = "def page(n, size):\n    return -(-n // size)\n"
    user = next(e for e in events if e.get("source") == "user" and e.get("action") == "message")
    user["args"]["image_urls"] = ["data:image/png;base64,iVBORw0KGgo="]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events))
    transcript = load(path)
    (use, *_) = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert use.input["content"] == edit["args"]["content"]
    assert [b.type for b in transcript.messages[0].content] == ["text", "image"]


def test_each_instance_of_an_output_is_an_episode() -> None:
    lines = [json.loads(line) for line in (FIXTURES / "output.jsonl").read_text().splitlines()]
    assert detect_format(lines[0]) == "openhands"
    first, second = load(FIXTURES / "output.jsonl"), load(FIXTURES / "output.jsonl", episode=1)
    assert (first.meta["instance_id"], second.meta["instance_id"]) == (
        "demo__pager-1",
        "demo__pager-2",
    )
    assert first.meta["models"] == ["anthropic/claude-sonnet-4-5"]


def test_a_trajectory_names_the_models_its_responses_name(tmp_path: Path) -> None:
    # An OpenHands trajectory (events with tool_call_metadata) names its model only in each
    # response: the session must say it, or it is priced and counted as no model.
    events = json.loads((FIXTURES / "trajectory.json").read_text())
    for event in events:
        response = (event.get("tool_call_metadata") or {}).get("model_response")
        if isinstance(response, dict):
            response["model"] = "claude-3-5-sonnet-20241022"
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events))
    assert load(path).meta["models"] == ["claude-3-5-sonnet-20241022"]
    # The control: responses that name no model leave the session's models as the file says.
    for event in events:
        response = (event.get("tool_call_metadata") or {}).get("model_response")
        if isinstance(response, dict):
            response.pop("model", None)
    path.write_text(json.dumps(events))
    assert load(path).meta.get("models") in (None, [])
