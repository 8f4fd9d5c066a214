"""Arbitrary config overrides are valid or refused at every boundary (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import (
    ContextConfig,
)
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel
from tests.strategies import SETTINGS, json_value, typed


@SETTINGS
@given(st.dictionaries(st.sampled_from(list(ContextConfig.model_fields)), json_value, max_size=4))
def test_configs_are_valid_or_refused_at_every_boundary(overrides: dict[str, Any]) -> None:
    try:
        config = ContextConfig(**overrides)
    except ValueError as exc:  # 002: a ValueError (pydantic's) naming the field and the rule
        assert any(name in str(exc) for name in overrides)
        return
    bypass = ContextConfig().model_copy(update=overrides)
    typed(lambda: Agent(model=ScriptedModel([]), context_config=bypass))
    assert Agent(model=ScriptedModel([]), context_config=config).context_config is config
