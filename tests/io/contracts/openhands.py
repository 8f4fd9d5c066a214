"""OpenHands: V0 evaluation output (a line an instance: the first instance's events, each
other instance one record) and trajectories (a list of events); V1 conversation folders (an
event a file; the usage in base_state.json, by response id); the LLM completion logs of V1
and V0 (the messages sent and the reply; prompted function calling logs each twice, as text and
with its tool calls — ``raw_messages``/``fncall_messages``, ``fncall_response``)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case, each
from tests.io.contracts.count import (
    PRESENT,
    TRUTHY,
    Count,
    Either,
    Field,
    Files,
    Find,
    Length,
    Lookup,
    Total,
)

OPENHANDS = FIXTURES / "openhands"
V1, V0 = OPENHANDS / "v1", OPENHANDS / "v0"

ACTION = {"action": PRESENT, "tool_call_metadata": TRUTHY}
RESPONSE = "tool_call_metadata.model_response"


def _events(at: str, first: bool) -> list[Case]:
    # The events at ``at`` (of the first line only, for evaluation output).
    path = OPENHANDS / ("output.jsonl" if first else "trajectory.json")
    actions = Find(at, where=ACTION, first=first)
    records = Count(Find(at, first=first))
    others = Total(Count(Find()), plus=-1) if first else Total()
    return [
        Case(
            path,
            records=Total(records, others),
            calls=Count(actions),
            outputs=Field(actions, f"{RESPONSE}.usage.completion_tokens", unique=f"{RESPONSE}.id"),
        )
    ]


_REPLIES = Find(file="events/event-*.json", where={"llm_response_id": TRUTHY})
_SENT = Either(Find("raw_messages.*"), Find("fncall_messages.*"), Find("messages.*"))
_REPLY = Either(Find("fncall_response"), Find("response"))
_TWICE = ("raw_messages", "fncall_messages")  # each a log of the same request as text too

CONTRACT = [
    *_events("history.*", first=True),
    *_events("*", first=False),
    Case(
        next((V1 / "conversation").iterdir()),
        records=Files("events/event-*.json"),
        calls=Count(Find(file="events/event-*.json", where={"kind": "ActionEvent"})),
        outputs=Lookup(
            Field(_REPLIES, "llm_response_id", unique="llm_response_id"),
            Find("stats.usage_to_metrics.*.token_usages.*", file="base_state.json"),
            key="response_id",
            value="completion_tokens",
        ),
    ),
    *each(
        [*sorted((V1 / "logs").glob("*.json")), *sorted((V0 / "llm_completions").glob("*/*.json"))],
        records=Total(
            Count(_SENT),
            *(Count(Find("messages.*", of={key: TRUTHY})) for key in _TWICE),
            *(Count(Find(of={key: TRUTHY})) for key in _TWICE),
            plus=1,
        ),
        calls=Total(Length(_SENT, "tool_calls"), Length(_REPLY, "choices.0.message.tool_calls")),
        outputs=Field(_REPLY, "usage.completion_tokens"),
    ),
]
