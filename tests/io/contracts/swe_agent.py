"""SWE-agent trajectories: a record a message of the history, and a step of the
trajectory."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find, Total

SWE_AGENT = {
    "history": [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "Looking.\n```\nls\n```", "action": "ls\n"},
        {"role": "user", "content": "a.py"},
        {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "action": "submit\n"},
    ],
    "trajectory": [
        {"action": "ls\n", "observation": "a.py", "response": "Looking."},
        {"action": "submit\n", "observation": "", "response": "Done."},
    ],
}
CONTRACT = [
    data(
        SWE_AGENT,
        "swe-agent trajectory",
        records=Total(Count(Find("history.*")), Count(Find("trajectory.*"))),
    )
]
