"""Anthropic Messages API requests: a record a message. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed_found

CONTRACT = [seed_found("anthropic", "messages.*", "messages.*.content.*", {"type": "tool_use"})]
