"""SWE-agent trajectories: a record a message of the history, and a step of the
trajectory. The fuzz harness's seed of the format (`tests.fuzz.seeds.WRITTEN`), and a
demonstration (`DEMONSTRATION`: the history alone, which tests/io/test_load_edges.py reads)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case, seed
from tests.io.contracts.count import Count, Find, Total

RECORDS = Total(Count(Find("history.*")), Count(Find("trajectory.*")))
"""A record a message of the history, and a step of the trajectory."""
DEMONSTRATION = FIXTURES / "swe_agent" / "demonstration.traj"
"""A demonstration without its trajectory (SWE-agent/SWE-agent, trajectories/demonstrations)."""

CONTRACT = [seed("swe_agent", records=RECORDS), Case(DEMONSTRATION, records=RECORDS)]
