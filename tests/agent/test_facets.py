"""The agent's task state and session log as facets of their own (``agent.tasks``,
``agent.log``); the old names keep working for one release, with a warning."""

from __future__ import annotations

import pytest

from ctxlab import Agent
from ctxlab.agent._agent import _MOVED
from ctxlab.models import ScriptedModel

MAX_MEMBERS = 35


def test_the_agent_surface_is_the_loop_the_context_and_its_steering() -> None:
    agent = Agent(model=ScriptedModel([]))
    public = [n for n in dir(agent) if not n.startswith("_")]
    assert len(public) <= MAX_MEMBERS, public
    assert not set(_MOVED) & set(public)  # the moved names are not members any more
    assert {"tasks", "log"} <= set(public)


def test_the_task_facet_steers_the_task_state() -> None:
    agent = Agent(model=ScriptedModel([]))
    agent.tasks.begin("export-42", "Fix the report export")
    agent.tasks.context(include_requirements=True)
    assert agent.tasks.state.objective == "Fix the report export"
    assert agent.tasks.options.include_requirements
    agent.tasks.set_mode("plan", plan_path="PLAN.md")
    assert agent.tasks.state.mode == "plan"


@pytest.mark.parametrize("old", sorted(_MOVED))
def test_every_old_name_still_works_with_a_warning(old: str) -> None:
    agent = Agent(model=ScriptedModel([]))
    facet, name = _MOVED[old]
    with pytest.warns(DeprecationWarning, match=f"Agent.{old} moved to Agent.{facet}.{name}"):
        value = getattr(agent, old)
    expected = getattr(getattr(agent, facet), name)
    assert value == expected  # the same property value, or the same bound method


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="'Agent' object has no attribute 'nope'"):
        _ = Agent(model=ScriptedModel([])).nope  # type: ignore[attr-defined]
