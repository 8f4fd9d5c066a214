"""Hostile message dicts parse or raise a typed error (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.messages import parse_messages
from ctxlab.models import messages_from_anthropic
from tests.strategies import SETTINGS, message_dicts, typed


@SETTINGS
@given(st.lists(message_dicts(), max_size=5))
def test_message_dicts_parse_or_raise_a_typed_error(data: list[Any]) -> None:
    for reader in (parse_messages, messages_from_anthropic):
        parsed = typed(reader, data)
        if parsed is not None:
            for message in parsed:
                message.model_dump_json()  # always serializable
