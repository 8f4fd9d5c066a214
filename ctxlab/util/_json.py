"""JSON text inside a record — a tool call's arguments, an OpenTelemetry attribute — decoded
without letting it break the reader: text nested deeper than Python's recursion allows, or a
number of more digits than Python converts, is not JSON here, as text that does not parse."""

from __future__ import annotations

import copy
import json
from typing import Any, Final

__all__ = ["NOT_JSON", "parse_json", "plain_copy"]


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


_ATOMS = frozenset({str, int, float, bool, type(None)})


def plain_copy(value: Any) -> Any:
    """``value`` copied as `dataclasses.asdict` copies a field that is plain data: dicts and
    lists rebuilt, what they hold copied in turn, an atom given back (`copy.deepcopy` gives
    it back too), anything else deep-copied — without a call for each atom of a list (a
    census's thousands of keys set aside, copied twice a load)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: v if type(v) in _ATOMS else plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMS else plain_copy(v) for v in value]
    return copy.deepcopy(value)
