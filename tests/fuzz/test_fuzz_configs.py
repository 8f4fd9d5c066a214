"""`ContextConfig.from_` and `ContextConfig.export` on hostile settings: an exported setting with
values no API takes (negative, NaN, text, a wrong type, a misspelt key) read back, and any
config exported to every target — a config, or a documented error (see `tests.fuzz.contract`).

Issue 40 (branch i40-cost) makes ``from_`` refuse what the APIs refuse with ctxlab's errors; until
that lands, ``from_`` raises pydantic's own error for some of them, and its fuzzing waits for
it (`_from_checks_values`, which turns it on by itself)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config import PRESETS
from ctxlab.exceptions import CtxlabError
from tests.fuzz.contract import FUZZ, holds
from tests.fuzz.mutations import mutated_value

TARGETS = ["anthropic", "langchain", "inspect", "pydantic_ai", "openai_agents", "nope", ""]


def _from_checks_values() -> bool:
    """Whether ``from_`` refuses a value the API refuses with a ctxlab error (issue 40)."""
    negative = {
        "edits": [
            {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": -5}}
        ]
    }
    try:
        ContextConfig.from_(negative)
    except CtxlabError:
        return True
    except Exception:
        return False
    return False


@pytest.mark.skipif(
    not _from_checks_values(),
    reason="issue 40 (branch i40-cost): from_ does not yet refuse values the API refuses with "
    "ctxlab's errors; this test turns itself on once it does",
)
@FUZZ
@given(
    preset=st.sampled_from(sorted(PRESETS)),
    data=st.data(),
)
def test_an_exported_setting_made_hostile_reads_back_or_is_refused(
    preset: str, data: st.DataObject
) -> None:
    exported = ContextConfig.preset(preset).export("anthropic").value
    value = data.draw(mutated_value(json.loads(json.dumps(exported))), label="value")
    window = data.draw(st.sampled_from([None, 0, -1, 200_000, float("nan")]), label="window")
    holds(lambda: ContextConfig.from_(value, "anthropic", context_window=window))


@pytest.fixture(scope="module")
def libraries_imported() -> None:
    """Each target's library imported once, untimed: a first export imports it, and the
    openai-agents SDK's import took 37 to 48 s under tracemalloc on a loaded machine — past the
    contract's bound for one call, one run in two (an import is not the export's time)."""
    for target in TARGETS:
        with contextlib.suppress(CtxlabError):
            ContextConfig().export(target, context_window=200_000)


@FUZZ
@given(preset=st.sampled_from(sorted(PRESETS)), target=st.sampled_from(TARGETS))
def test_every_preset_exports_to_every_target_or_says_why(
    libraries_imported: None, preset: str, target: str
) -> None:
    config = ContextConfig.preset(preset)
    kwargs: dict[str, Any] = {"context_window": 200_000} if target == "langchain" else {}
    holds(lambda: config.export(target, **kwargs))
