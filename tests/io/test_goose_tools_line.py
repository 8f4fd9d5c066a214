"""A Goose session log whose first line holds the tool schemas (``{"tools": [...]}``) before
Goose's message lines is Goose's: detected by its message lines, its tools read as the
transcript's (``tests/fixtures/goose/tools_line``: a public sample, taken unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from tests.io.shown import added_up
from tests.strategies import SETTINGS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "goose"
SAMPLE = FIXTURES / "tools_line" / "sample_session.jsonl"
LEGACY = FIXTURES / "20250514_103000.jsonl"


def test_the_public_sample_loads_whole() -> None:
    transcript = load(SAMPLE)
    assert transcript.meta["source"] == "goose"
    (tool,) = transcript.tools
    assert tool.name == "get_weather"
    assert tool.description == "Get the current weather for a location"
    assert tool.input_schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    roles = [m.role for m in transcript.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    call = transcript.messages[1].content[1]
    assert isinstance(call, ToolUseBlock)
    assert (call.id, call.name, call.input) == (
        "tool-1",
        "get_weather",
        {"location": "San Francisco", "unit": "celsius"},
    )
    (result,) = transcript.messages[2].content
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == "tool-1"
    assert result.text == "The weather is sunny and 22°C"
    census = added_up(transcript)
    assert census.read == {"tool schemas": 1, "user message": 2, "assistant message": 2}
    assert census.skipped == {}


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.text(st.characters(codec="ascii", categories=["L"]), min_size=1),
                "description": st.text(max_size=20),
                "input_schema": st.just({"type": "object", "properties": {}}),
            }
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t["name"],
    )
)
def test_a_tools_line_before_a_goose_file_adds_its_tools_and_changes_nothing_else(
    tools: list[dict[str, object]],
) -> None:
    import tempfile

    original = load(LEGACY)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / LEGACY.name
        path.write_text(json.dumps({"tools": tools}) + "\n" + LEGACY.read_text())
        transcript = load(path)
    assert [t.name for t in transcript.tools] == [t["name"] for t in tools]
    assert [m.model_dump() for m in transcript.messages] == [
        m.model_dump() for m in original.messages
    ]
    assert transcript.meta["working_dir"] == original.meta["working_dir"]
    census, before = transcript.census, original.census
    assert census is not None and before is not None and census.adds_up
    assert census.read == {**before.read, "tool schemas": 1}
