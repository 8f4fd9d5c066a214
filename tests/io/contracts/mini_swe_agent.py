"""mini-SWE-agent trajectories: a record a message; the calls are the messages' tool calls
(a text-based trajectory's calls are parsed from the reply: not counted here); the outputs
each assistant message's response usage."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import PRESENT, Count, Either, Field, Find, Length

MESSAGES = Either(Find("messages.*"), Find("*"))  # a list of messages, or under "messages"
OUTPUTS = Field(
    Either(
        Find("messages.*", where={"role": "assistant", "extra.response": PRESENT}),
        Find("*", where={"role": "assistant", "extra.response": PRESENT}),
    ),
    "extra.response.usage.completion_tokens",
)
CONTRACT = [
    Case(
        FIXTURES / "mini_swe_agent" / "toolcalls.traj.json",
        records=Count(MESSAGES),
        calls=Length(MESSAGES, "tool_calls"),
        outputs=OUTPUTS,
    ),
    Case(
        FIXTURES / "mini_swe_agent" / "textbased.traj.json",
        records=Count(MESSAGES),
        outputs=OUTPUTS,
    ),
]
