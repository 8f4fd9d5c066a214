"""Pydantic AI messages: a record a part of a request or a response. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed_found

CONTRACT = [seed_found("pydantic_ai", "*.parts.*", "*.parts.*", {"part_kind": "tool-call"})]
