"""Continue sessions: a record an item of the history."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Count, Find

CONTRACT = each(
    sorted((FIXTURES / "continue" / "sessions").glob("*-*.json")),
    records=Count(Find("history.*")),
)
