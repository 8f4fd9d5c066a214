"""tau-bench results: the first episode's messages, and each other episode as one record
(two episodes of the OpenAI seed's messages, `tests.fuzz.seeds.WRITTEN`)."""

from __future__ import annotations

from tests.fuzz.seeds import WRITTEN
from tests.io.contracts import data
from tests.io.contracts.count import Count, Find, Total

OPENAI = WRITTEN["openai"][1]
TAU_BENCH = [
    {"task_id": 0, "trial": 0, "reward": 1.0, "traj": OPENAI},
    {"task_id": 1, "trial": 0, "reward": 0.0, "traj": OPENAI[:2]},
]
CONTRACT = [
    data(
        TAU_BENCH,
        "tau-bench episodes",
        records=Total(Count(Find("0.traj.*")), Count(Find("*")), plus=-1),
    )
]
