"""Every control of the Lab's Config tab is applied to the agent's config."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel


def test_every_config_panel_control_is_applied() -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    agent = Agent(model=ScriptedModel([]), counter=ApproximateCounter())
    lab = Lab(agent)
    wanted = {
        "trigger_ratio": 0.7,
        "reserve_ratio": 0.05,
        "context_buffer_ratio": 0.3,
        "tool_result_limit": 1234,
        "max_image_num": 2,
        "compression_tool_enabled": True,
        "compression_fallback_to_truncation": False,
    }
    assert set(wanted) == set(lab.config.controls)
    for name, value in wanted.items():
        lab.config.controls[name].value = value
    lab.config.apply_button.click()
    assert {name: getattr(agent.context_config, name) for name in wanted} == wanted
    lab.close()
