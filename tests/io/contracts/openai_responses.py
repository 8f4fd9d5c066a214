"""OpenAI Responses API items: a record an item. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed_found

CONTRACT = [seed_found("openai_responses", "*", "*", {"type": "function_call"})]
