"""JSON text inside a record — a tool call's arguments, an OpenTelemetry attribute — decoded
without letting it break the reader: text nested deeper than Python's recursion allows, or a
number of more digits than Python converts, is not JSON here, as text that does not parse."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["NOT_JSON", "parse_json"]


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Final = _NotJson()
"""What `parse_json` returns for text it cannot decode."""


def parse_json(text: str) -> Any:
    """``text`` decoded, or `NOT_JSON` when it is not JSON, is nested too deeply to decode
    (``RecursionError``), or holds a number of over 4,300 digits (``ValueError``)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return NOT_JSON
