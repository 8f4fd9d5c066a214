"""The JSON documents of AutoGen (a team's and an agent's saved state), smolagents (memory steps)
and OpenCode (an export), each fixture detected as its format, and each mutated by Hypothesis
(`tests.io.mutate`): a typed error, or a transcript with valid tool pairs whose losses are
counted. One test a check for every format: the logic is the same, the fixtures differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io import detect_format
from tests.io.mutate import loads_or_refuses, mutated
from tests.strategies import SETTINGS

FIXTURES = Path(__file__).parents[1] / "fixtures"
DOCUMENTS = {
    "autogen": [
        FIXTURES / "autogen" / "team_state.json",
        FIXTURES / "autogen" / "coder_state.json",
    ],
    "smolagents": [
        FIXTURES / "smolagents" / "tool_calling_steps.json",
        FIXTURES / "smolagents" / "code_steps.json",
    ],
    "opencode": [FIXTURES / "opencode" / "export.json"],
}


def _raw(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.parametrize("format", DOCUMENTS)
def test_detected(format: str) -> None:
    for path in DOCUMENTS[format]:
        assert detect_format(_raw(path)) == format, path


@pytest.mark.parametrize("format", DOCUMENTS)
@SETTINGS
@given(data=st.data())
def test_a_mutated_document_loads_or_raises_a_typed_error(format: str, data: st.DataObject) -> None:
    # Each format its own Hypothesis run (as many examples as when each module held its own).
    changed = data.draw(mutated(_raw(data.draw(st.sampled_from(DOCUMENTS[format])))))
    loads_or_refuses(lambda: load(changed, format=format))  # type: ignore[arg-type]
