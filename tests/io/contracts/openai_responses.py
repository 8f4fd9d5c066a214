"""OpenAI Responses API items: a record an item. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find

CONTRACT = [
    seed(
        "openai_responses",
        records=Count(Find("*")),
        calls=Count(Find("*", where={"type": "function_call"})),
    )
]
