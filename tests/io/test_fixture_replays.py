"""Every format's fixture replays at 200k and 32k without an invalid request: what an importer
hands over is a conversation the pipeline can send."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from tests.helpers import validations

FIXTURES = Path(__file__).parents[1] / "fixtures"
FILES = [
    FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl",
    FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl",
    FIXTURES / "gemini" / "session-legacy.json",
    FIXTURES / "mini_swe_agent" / "toolcalls.traj.json",
    FIXTURES / "mini_swe_agent" / "textbased.traj.json",
    FIXTURES / "openhands" / "output.jsonl",
    FIXTURES / "openhands" / "trajectory.json",
    FIXTURES / "aider" / ".aider.chat.history.md",
    FIXTURES / "inspect" / "add.eval",
    FIXTURES / "inspect" / "add.json",
    FIXTURES / "vercel_ai" / "vercel_ai_otlp.json",
    FIXTURES / "langfuse" / "langfuse_spans.json",
    FIXTURES / "openai_agents" / "chat_trace.json",
    FIXTURES / "openllmetry" / "openai_spans.json",
    FIXTURES
    / "copilot"
    / "session-state"
    / "5f0c1a2e-7b7d-4c9e-9a51-3b8e2d6f1c44"
    / "events.jsonl",
    *sorted((FIXTURES / "cline").glob("*/tasks/*")),
    FIXTURES / "continue" / "sessions" / "7c1e2a4b-5d6f-4a8b-9c0d-1e2f3a4b5c6d.json",
    FIXTURES / "codex_exec" / "exec-0.60.jsonl",
    FIXTURES / "codex_exec" / "exec-0.30.jsonl",
    FIXTURES / "gemini_stream" / "stream-json.jsonl",
    FIXTURES / "letta" / "outreach_workflow_agent.af",
    FIXTURES / "letta" / "composio_github_star_agent.af",
    FIXTURES / "letta" / "lettabot-builder.af",
    FIXTURES / "autogen" / "team_state.json",
    FIXTURES / "autogen" / "coder_state.json",
    FIXTURES / "smolagents" / "tool_calling_steps.json",
    FIXTURES / "smolagents" / "code_steps.json",
    FIXTURES / "opencode" / "export.json",
    *sorted((FIXTURES / "opencode" / "storage" / "session").glob("*/*.json")),
    FIXTURES / "goose" / "20250514_103000.jsonl",
    FIXTURES / "goose" / "export.json",
    *sorted(p for p in (FIXTURES / "specstory").glob("*.md") if p.name != "README.md"),
]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
@pytest.mark.parametrize("window", [200_000, 32_000])
async def test_a_fixture_replays_without_an_invalid_request(path: Path, window: int) -> None:
    transcript = load(path)
    steps = await validations(transcript, window)
    assert steps, path.name
    assert steps == ["passed"] * len(steps)
    # One request per recorded reply.
    replies = sum(m.role == "assistant" for m in transcript.messages)
    assert len(steps) == replies
