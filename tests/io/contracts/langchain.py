"""LangChain message dicts (``messages_to_dict``): a record a message. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find, Length

CONTRACT = [seed("langchain", records=Count(Find("*")), calls=Length(Find("*.data"), "tool_calls"))]
