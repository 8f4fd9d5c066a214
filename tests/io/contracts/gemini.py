"""Gemini API contents: a record a content. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import PRESENT, Count, Find

CONTRACT = [
    seed(
        "gemini",
        records=Count(Find("*")),
        calls=Count(Find("*.parts.*", where={"functionCall": PRESENT})),
    )
]
