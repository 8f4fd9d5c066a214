"""OpenAI Chat Completions messages: a record a message."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find, Length

_CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
OPENAI = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": None, "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    {"role": "assistant", "content": "One file: a.py."},
]
CONTRACT = [
    data(OPENAI, "openai messages", records=Count(Find("*")), calls=Length(Find("*"), "tool_calls"))
]
