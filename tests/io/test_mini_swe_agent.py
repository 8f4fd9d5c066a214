"""mini-SWE-agent trajectories: 2.x tool calls, 1.x/text-based actions, bare message lists
(tests/fixtures/mini_swe_agent, written from mini's own code)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.io import detect_format, load
from ctxlab.messages import ProviderUsage, find_tool_pair_problems

FIXTURES = Path(__file__).parents[1] / "fixtures" / "mini_swe_agent"


def test_a_tool_calling_run_keeps_every_call_and_observation() -> None:
    data = json.loads((FIXTURES / "toolcalls.traj.json").read_text())
    transcript = load(FIXTURES / "toolcalls.traj.json")
    assert transcript.meta["source"] == "mini_swe_agent"
    assert transcript.meta["models"] == ["anthropic/claude-sonnet-4-5-20250929"]
    assert (transcript.meta["exit_status"], transcript.meta["api_calls"]) == ("Submitted", 3)
    assert transcript.meta["instance_id"] == "demo__calc-1"
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    # Counted from the raw file: every call and every observation, by id.
    raw_calls = [c["id"] for m in data["messages"] for c in m.get("tool_calls") or ()]
    raw_results = [m["tool_call_id"] for m in data["messages"] if m["role"] == "tool"]
    assert [u.id for u in uses] == raw_calls
    # The submission call ended the run unanswered: its result is a stated repair.
    assert [r.tool_use_id for r in results] == [*raw_results, "toolu_04"]
    assert results[-1].is_error and transcript.meta["synthesized_results"] == 1
    assert uses[1].input == {"command": "sed -i 's/a - b/a + b/' calc.py"}
    assert "5" in results[2].text
    # The reply with empty content and only a call is kept.
    assert transcript.messages[-2].tool_uses[0].id == "toolu_04"  # type: ignore[union-attr]
    assert find_tool_pair_problems(transcript.messages) == []
    assert list(transcript.usage.values()) == [
        ProviderUsage(2_100, 30, 0),
        ProviderUsage(300, 60, 2_000),
        ProviderUsage(200, 20, 2_300),
    ]
    assert transcript.meta["skipped"] == {"exit message": 1}


def test_a_bare_text_based_list_is_recognised_and_its_actions_are_calls() -> None:
    data = json.loads((FIXTURES / "textbased.traj.json").read_text())
    assert detect_format(data) == "mini_swe_agent"
    transcript = load(FIXTURES / "textbased.traj.json")
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    # One action a reply: the fenced one and the tagged one; the reply with two ran nothing.
    assert [u.input["command"] for u in uses] == ["cat calc.py", "sed -i 's/a - b/a + b/' calc.py"]
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]
    assert "return a - b" in results[0].text
    # The format error is the user's message, after the reply that caused it.
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert any(t.startswith("Please always provide EXACTLY ONE action") for t in texts)
    assert transcript.messages[1].content[0].text == "THOUGHT: look first."  # type: ignore[union-attr]
    assert find_tool_pair_problems(transcript.messages) == []
    assert transcript.meta["exit_status"] == "Submitted"
