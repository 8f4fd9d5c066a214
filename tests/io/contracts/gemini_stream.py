"""Gemini CLI ``--output-format stream-json``: a record a line."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Lines

CONTRACT = [Case(FIXTURES / "gemini_stream" / "stream-json.jsonl", records=Lines())]
