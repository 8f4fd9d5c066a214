"""Letta agent files (``.af``): a record a message — of every agent, in the v2 file."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import ABSENT, Find, Length, Total

CONTRACT = each(
    sorted((FIXTURES / "letta").glob("*.af")),
    records=Total(
        Length(Find("agents.*"), "messages"), Length(Find(of={"agents": ABSENT}), "messages")
    ),
)
