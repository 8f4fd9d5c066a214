"""OpenAI Chat Completions messages: a record a message. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find, Length

CONTRACT = [seed("openai", records=Count(Find("*")), calls=Length(Find("*"), "tool_calls"))]
