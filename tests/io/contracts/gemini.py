"""Gemini API contents: a record a content."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import PRESENT, Count, Find

GEMINI = [
    {"role": "user", "parts": [{"text": "List the files."}]},
    {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": "a"}}}]},
    {"role": "model", "parts": [{"text": "One file: a.py."}]},
]
CONTRACT = [
    data(
        GEMINI,
        "gemini contents",
        records=Count(Find("*")),
        calls=Count(Find("*.parts.*", where={"functionCall": PRESENT})),
    )
]
