"""LangChain message dicts (``messages_to_dict``): a record a message."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find, Length

LANGCHAIN = [
    {"type": "system", "data": {"content": "Be brief."}},
    {"type": "human", "data": {"content": "List the files."}},
    {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "ls", "args": {}}]}},
    {"type": "tool", "data": {"content": "a.py", "tool_call_id": "c1"}},
    {"type": "ai", "data": {"content": "One file: a.py."}},
]
CONTRACT = [
    data(
        LANGCHAIN,
        "langchain dicts",
        records=Count(Find("*")),
        calls=Length(Find("*.data"), "tool_calls"),
    )
]
