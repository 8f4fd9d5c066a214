"""SWE-agent trajectories: a record a message of the history, and a step of the
trajectory. The document is the fuzz harness's seed of the format
(`tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.io.contracts import seed
from tests.io.contracts.count import Count, Find, Total

CONTRACT = [seed("swe_agent", records=Total(Count(Find("history.*")), Count(Find("trajectory.*"))))]
