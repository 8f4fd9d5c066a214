"""smolagents memory steps (``agent.memory.get_full_steps()``): a record a step."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Count, Find

CONTRACT = each(sorted((FIXTURES / "smolagents").glob("*.json")), records=Count(Find("*")))
