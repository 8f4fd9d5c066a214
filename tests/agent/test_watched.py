"""One contract for what a Lab watches: the agent and every step source meet it, each declares
what it can do, and the Lab asks the capabilities, never the class."""

from __future__ import annotations

import ast
from pathlib import Path

from ctxlab import Agent, ObservedSession, ReplaySession, load
from ctxlab.agent._watched import Watched
from ctxlab.models import ScriptedModel

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
LAB = Path(__file__).parents[2] / "ctxlab" / "widgets" / "_lab.py"


def test_the_agent_and_every_source_meet_the_contract_and_declare_what_they_can_do() -> None:
    agent = Agent(model=ScriptedModel([]))
    recording = ReplaySession(load(FIXTURE), context_window=8_000)
    observed = ObservedSession(context_window=8_000)
    for watched in (agent, recording, observed):
        assert isinstance(watched, Watched)
    assert not agent.capabilities.read_only and not agent.capabilities.replays
    assert recording.capabilities.read_only and recording.capabilities.replays
    assert observed.capabilities.read_only and not observed.capabilities.replays
    assert "another framework" in observed.capabilities.note


def test_the_lab_never_asks_what_class_it_watches() -> None:
    tree = ast.parse(LAB.read_text(encoding="utf-8"))
    checks = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "isinstance"
        and {"Agent", "ReplaySession", "StepSource", "ObservedSession"}
        & {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
    ]
    assert not checks, checks
