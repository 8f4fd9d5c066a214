"""Anthropic Messages API requests: a record a message, the calls its ``tool_use`` blocks. The
fuzz harness's seed of the format (`tests.fuzz.seeds.WRITTEN`), the request of every block kind
tests/io/test_blocks.py reads (`BLOCKS`), and the history of text-encoded results
tests/io/test_text_results.py reads (`TEXT_RESULTS`)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, found, seed_found

BLOCKS = FIXTURES / "anthropic" / "blocks.json"
"""A request (``{"messages": [...]}``) of documents, thinking, server tools and a search result."""
TEXT_RESULTS = FIXTURES / "anthropic" / "text_results.json"
"""Cline's shape of an API history (a list of messages) whose results are text blocks."""
TOOL_USE = {"type": "tool_use"}

CONTRACT = [
    seed_found("anthropic", "messages.*", "messages.*.content.*", TOOL_USE),
    found(BLOCKS, "messages.*", "messages.*.content.*", TOOL_USE),
    found(TEXT_RESULTS, "*", "*.content.*", TOOL_USE),
]
