"""Anthropic Messages API requests: a record a message. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find

CONTRACT = [
    seed(
        "anthropic",
        records=Count(Find("messages.*")),
        calls=Count(Find("messages.*.content.*", where={"type": "tool_use"})),
    )
]
