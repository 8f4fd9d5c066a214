"""``codex exec --json`` event streams: a record a line."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Lines

CONTRACT = each(sorted((FIXTURES / "codex_exec").glob("*.jsonl")), records=Lines())
