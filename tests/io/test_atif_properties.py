"""Generated conversations through ATIF and back: every one exports valid against ATIF v1.7's
models and `ctxlab.load` reads it back with what ATIF holds of it unchanged — texts in any
alphabet, reasoning with signatures, parallel calls, error results, images, cache usage."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import ctxlab
from ctxlab.io import to_atif
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    ImageBlock,
    ProviderUsage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from tests.io.test_atif import _held, atif_problems
from tests.strategies import SETTINGS, json_value, typed

# Text that survives JSON: any character but a lone surrogate (no UTF-8 encodes one).
text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30
).filter(str.strip)
image = ImageBlock(source=Base64ImageSource(media_type="image/png", data="iVBORw0KGgo="))


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Any], dict[int, ProviderUsage]]:
    """A valid conversation: user turns (text, an image), replies (reasoning, text, calls) each
    answered by a user turn of results (some errors), and usage on some replies."""
    messages: list[Any] = [UserMessage(content=(TextBlock(text=draw(text)),))]
    usage: dict[int, ProviderUsage] = {}
    for turn in range(draw(st.integers(1, 4))):
        blocks: list[Any] = []
        if draw(st.booleans()):
            blocks.append(
                ThinkingBlock(thinking=draw(text), signature=draw(st.sampled_from(["", "sig"])))
            )
        blocks += [TextBlock(text=t) for t in draw(st.lists(text, max_size=2))]
        calls = [
            ToolUseBlock(id=f"call_{turn}_{n}", name="bash", input={"command": draw(text)})
            for n in range(draw(st.integers(0 if blocks else 1, 2)))
        ]
        messages.append(AssistantMessage(content=(*blocks, *calls)))
        if draw(st.booleans()):
            reads = draw(st.integers(0, 5000))
            usage[len(messages) - 1] = ProviderUsage(
                draw(st.integers(0, 5000)),
                draw(st.integers(1, 500)),
                reads,
                draw(st.integers(0, 900)),
            )
        answer: list[Any] = [
            ToolResultBlock(tool_use_id=c.id, content=draw(text), is_error=draw(st.booleans()))
            for c in calls
        ]
        if not calls or draw(st.booleans()):
            answer.append(TextBlock(text=draw(text)))
            if draw(st.booleans()):
                answer.append(image)
        messages.append(UserMessage(content=tuple(answer)))
    return messages, usage


@SETTINGS
@given(conversations(), st.sampled_from(["", "You are careful."]))
def test_a_generated_conversation_goes_to_atif_and_back(
    drawn: tuple[list[Any], dict[int, ProviderUsage]], system: str
) -> None:
    messages, usage = drawn
    transcript = ctxlab.Transcript(
        name="generated",
        meta={"source": "ctxlab"},
        system=system,
        messages=tuple(messages),
        usage=usage,
    )
    document = to_atif(transcript)
    assert atif_problems(document) == []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        back = ctxlab.load(path)
    assert _held(back.messages) == _held(transcript.messages)
    assert back.usage == usage
    assert back.system == system
    census = back.census
    assert census is not None and census.adds_up and census.unaccounted == {}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    # Every place in a document: each key of each object, each item of each list.
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


V17 = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "atif" / "harbor_models_v1_7.json").read_text()
)
PLACES = [p for p in _paths(V17) if p]


@SETTINGS
@given(st.sampled_from(PLACES), json_value, st.integers(0, 1))
def test_any_field_of_any_type_loads_or_says_why(
    place: tuple[Any, ...], value: Any, episode: int
) -> None:
    document = json.loads(json.dumps(V17))
    holder = document
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = value
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        transcript = typed(lambda: ctxlab.load(path, format="atif", episode=episode))
    if transcript is not None:
        census = transcript.census
        assert census is not None and census.adds_up, census
        assert atif_problems(to_atif(transcript)) == []
