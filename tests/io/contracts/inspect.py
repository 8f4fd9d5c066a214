"""Inspect AI logs: the first sample's messages and events, and each other sample as one
record; the calls are the first sample's messages' tool calls, the outputs its model events'
usage. The ``.eval`` archive's samples (zstd-compressed, which Python's zipfile does not read)
are counted by name, its first sample read from the same log's JSON."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Count, Field, Find, Length, Members, Total

INSPECT = FIXTURES / "inspect"


def _case(path_name: str, samples: object, json_name: str | None) -> Case:
    first = "samples.0"
    messages = Find(f"{first}.messages.*", file=json_name)
    events = Find(f"{first}.events.*", file=json_name)
    return Case(
        INSPECT / path_name,
        records=Total(Count(messages), Count(events), samples, plus=-1),  # type: ignore[arg-type]
        calls=Length(messages, "tool_calls"),
        outputs=Field(
            Find(f"{first}.events.*", where={"event": "model"}, file=json_name),
            "output.usage.output_tokens",
        ),
    )


CONTRACT = [
    _case("add.json", Count(Find("samples.*")), None),
    _case("add.eval", Members("samples/"), "add.json"),
]
