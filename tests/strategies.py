"""Hypothesis strategies and checks shared by the hostile-input tests of every package: text
from any alphabet, JSON values, message-like dicts; `typed` (a failure must be a typed error
with a message)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from ctxlab.exceptions import CtxlabError

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Text from any alphabet: surrogates and control characters included.
any_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=40)
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
block_kinds = st.sampled_from(
    ["text", "image", "tool_use", "tool_result", "thinking", "hint", None]
)


@st.composite
def message_dicts(draw: st.DrawFn) -> Any:
    """Message-like dicts: mostly plausible shapes with hostile values, sometimes anything."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_value)
    blocks = []
    for _ in range(draw(st.integers(0, 3))):
        block: dict[str, Any] = {"type": draw(block_kinds)}
        for key in draw(
            st.lists(
                st.sampled_from(
                    ["text", "id", "name", "input", "tool_use_id", "content", "is_error", "source"]
                ),
                max_size=4,
            )
        ):
            block[key] = draw(json_value)
        blocks.append(block)
    content = draw(st.sampled_from(["blocks", "text", "other"]))
    return {
        "role": draw(st.sampled_from(["user", "assistant", "system", "tool", None])),
        "content": blocks
        if content == "blocks"
        else draw(any_text)
        if content == "text"
        else draw(json_value),
    }


def typed(call: Any, *args: Any) -> Any:
    """Run ``call``; a failure must be a `CtxlabError` with a message."""
    try:
        return call(*args)
    except CtxlabError as exc:
        assert str(exc).strip()
        return None
