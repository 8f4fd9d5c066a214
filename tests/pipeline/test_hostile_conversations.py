"""prepare on any parsed conversation gives a valid request or a typed error (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import (
    ApproximateCounter,
    WorkingState,
    prepare,
)
from ctxlab.exceptions import CtxlabError
from ctxlab.messages import find_tool_pair_problems, parse_messages
from tests.strategies import SETTINGS, message_dicts, typed


@SETTINGS
@given(st.lists(message_dicts(), max_size=6))
async def test_prepare_on_any_parsed_conversation_is_valid_or_typed(data: list[Any]) -> None:
    messages = typed(parse_messages, data)
    if not messages:
        return
    state = WorkingState(conversation=tuple(messages))
    try:
        prep = await prepare(state, context_window=2_000, counter=ApproximateCounter())
    except CtxlabError as exc:
        assert str(exc).strip() and getattr(exc, "manifest", None) is not None
        return
    assert not find_tool_pair_problems(prep.request.messages)
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit
