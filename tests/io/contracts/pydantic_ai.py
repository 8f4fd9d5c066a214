"""Pydantic AI messages: a record a part of a request or a response. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find

CONTRACT = [
    seed(
        "pydantic_ai",
        records=Count(Find("*.parts.*")),
        calls=Count(Find("*.parts.*", where={"part_kind": "tool-call"})),
    )
]
