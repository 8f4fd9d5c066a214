"""Goose sessions: the JSON Lines of older versions (a record a line) and an export (the
session, then its messages)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Count, Find, Lines, Total

CONTRACT = [
    Case(FIXTURES / "goose" / "20250514_103000.jsonl", records=Lines()),
    Case(FIXTURES / "goose" / "export.json", records=Total(Count(Find("conversation.*")), plus=1)),
]
