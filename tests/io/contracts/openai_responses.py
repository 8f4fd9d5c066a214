"""OpenAI Responses API items: a record an item, the calls its ``function_call`` items. The
fuzz harness's seed of the format (`tests.fuzz.seeds.WRITTEN`), and the items
tests/io/test_load.py reads (`RESPONSES_ITEMS`)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, found, seed_found

RESPONSES_ITEMS = FIXTURES / "openai_responses" / "items.json"
"""A developer message, a user's, a reasoning item (skipped: no text), a call, its output and
the reply."""
CALL = {"type": "function_call"}

CONTRACT = [
    seed_found("openai_responses", "*", "*", CALL),
    found(RESPONSES_ITEMS, "*", "*", CALL, skipped={"reasoning": 1}),
]
