"""ATIF trajectories (Harbor's Agent Trajectory Interchange Format, v1.0–v1.7): a record a step
of the main trajectory, a call each element of a step's ``tool_calls``."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Count, Find

CONTRACT = each(
    sorted((FIXTURES / "atif").glob("*.json")),
    records=Count(Find("steps.*")),
    calls=Count(Find("steps.*.tool_calls.*")),
)
