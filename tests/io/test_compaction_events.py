"""A replay's compaction events out and back: every evaluation of the trigger, fired or not, as
an OpenTelemetry GenAI span event (`ctxlab.io.to_otel`) that `ctxlab.load` reads back equal,
and in ATIF's extension fields (`ctxlab.io.to_atif`). The figures are checked against the
replay's own manifests and compaction records, computed here."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from ctxlab.analysis import ReplayStep
from ctxlab.config import ContextConfig, OnDemandCompaction
from ctxlab.io import compaction_events, to_atif, to_otel, write_atif, write_otel
from ctxlab.messages import AssistantMessage, TextBlock, ToolSchema
from tests.helpers import replayed
from tests.io.test_atif import atif_problems

SESSION = Path(__file__).parents[1] / "fixtures" / "claude_code"
SESSION = SESSION / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
WINDOW = 6_000


@pytest.fixture(scope="module")
def transcript() -> ctxlab.Transcript:
    return ctxlab.load(SESSION)


def _steps(transcript: ctxlab.Transcript, window: int, **options: Any) -> list[ReplayStep]:
    """Every step of ``transcript`` replayed at ``window``, ungraded (``options`` to `replay`)."""

    async def run() -> list[ReplayStep]:
        steps = replayed(transcript, context_window=window, grade=False, **options)
        return [step async for step in steps]

    return asyncio.run(run())


@pytest.fixture(scope="module")
def steps(transcript: ctxlab.Transcript) -> list[ReplayStep]:
    return _steps(transcript, WINDOW)  # once for the module: a replay is the slow part


def test_every_evaluation_is_an_event_with_the_replays_own_figures(
    steps: list[ReplayStep],
) -> None:
    events = compaction_events(steps)
    assert len(events) == len(steps)  # every request evaluated the trigger
    fired = [e for e in events if e["fired"]]
    assert [e["request"] for e in fired] == [n for n, s in enumerate(steps) if s.compaction]
    assert fired and len(fired) < len(events)  # both kinds are exercised
    trigger = int(ContextConfig().trigger_ratio * WINDOW)
    for event, step in zip(events, steps, strict=True):
        totals = step.manifest.totals
        history = totals["summary"] + totals["conversation"]
        assert event["threshold_tokens"] == trigger
        assert event["context_size"] == WINDOW
        assert event["tokens_after"]["history"] == history
        assert event["total_after"] == sum(totals.values())
        record = step.compaction
        if record is None:
            assert event["tokens_before"] == event["tokens_after"]
            assert event["method"] is None and event["messages_compacted"] == 0
            assert (event["trigger"], event["reason"]) == ("automatic", None)
        else:
            assert event["tokens_before"]["history"] == record.tokens_before
            assert event["total_before"] == sum(totals.values()) - history + record.tokens_before
            assert event["total_before"] > trigger
            assert (event["trigger"], event["reason"]) == ("automatic", "tokens")
            assert event["method"] == "summary"
            assert event["messages_compacted"] == record.messages_compacted


def test_the_events_read_back_equal_from_the_otel_export(
    transcript: ctxlab.Transcript, steps: list[ReplayStep], tmp_path: Path
) -> None:
    first = next(n for n, s in enumerate(steps) if s.compaction)
    costs = {first: 0.0123}
    path = write_otel(transcript, tmp_path / "trace.json", steps=steps, summary_costs=costs)
    back = ctxlab.load(path)
    assert back.meta["source"] == "otel"
    read = [
        {k: v for k, v in e.items() if k != "conversation"} for e in back.meta["compaction_events"]
    ]
    assert read == compaction_events(steps, summary_costs=costs)
    assert read[first]["summary_cost_usd"] == 0.0123
    assert {e["conversation"] for e in back.meta["compaction_events"]} == {transcript.name}
    # The conversation comes back too, as far as its last request: texts, calls, results, usage
    # (what follows the last reply was sent in no request, and no span holds it: the reader
    # answers the last reply's calls with its placeholder).
    census = back.census
    assert census is not None and census.adds_up and census.unaccounted == {}
    last = max(i for i, m in enumerate(transcript.messages) if m.role == "assistant")
    assert _texts(back)[: last + 1] == _texts(transcript)[: last + 1]
    assert back.usage == transcript.usage


def test_the_spans_follow_the_genai_conventions_and_the_events_are_ctxlabs_own(
    transcript: ctxlab.Transcript, steps: list[ReplayStep]
) -> None:
    data = to_otel(transcript, steps=steps)
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == sum(1 for m in transcript.messages if m.role == "assistant")
    attrs = {a["key"]: a["value"] for a in spans[0]["attributes"]}
    assert attrs["gen_ai.operation.name"] == {"stringValue": "chat"}
    assert spans[0]["kind"] == 3 and spans[0]["name"].startswith("chat ")
    usage = transcript.usage[1]
    assert attrs["gen_ai.usage.input_tokens"] == {"intValue": str(usage.total_input_tokens)}
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == {
        "intValue": str(usage.cache_read_input_tokens)
    }
    events = [e for s in spans for e in s["events"]]
    assert len(events) == len(steps)
    assert {e["name"] for e in events} == {"ctxlab.compaction"}
    assert all(a["key"].startswith("ctxlab.compaction.") for e in events for a in e["attributes"])
    # Each event sits on the span of the reply its request was prepared for.
    replies = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    for span, index in zip(spans, replies, strict=True):
        numbers = [_attr(e, "ctxlab.compaction.request") for e in span["events"]]
        assert [steps[int(n)].index for n in numbers] == [index] * len(numbers)


def test_a_trace_without_the_events_reads_none(
    transcript: ctxlab.Transcript, steps: list[ReplayStep], tmp_path: Path
) -> None:
    # The control: the events come from the spans, not from anywhere else.
    data = to_otel(transcript, steps=steps)
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["events"] = []
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    assert "compaction_events" not in ctxlab.load(path).meta


def test_the_atif_export_carries_the_events_in_its_extension_fields(
    transcript: ctxlab.Transcript, steps: list[ReplayStep]
) -> None:
    document = to_atif(transcript, steps=steps)
    assert atif_problems(document) == []
    assert document["extra"]["ctxlab"]["compaction_events"] == compaction_events(steps)


def _texts(transcript: ctxlab.Transcript) -> list[tuple[str, list[Any]]]:
    # What the conventions' parts hold: texts, reasoning, calls and results (no signatures).
    out = []
    for message in transcript.messages:
        parts: list[Any] = []
        for block in message.content:
            if block.type == "text":
                parts.append(block.text)
            elif block.type == "thinking":
                parts.append(("thinking", block.thinking))
            elif block.type == "tool_use":
                parts.append((block.id, block.name, block.input))
            elif block.type == "tool_result":
                parts.append((block.tool_use_id, block.text))
        out.append((message.role, parts))
    return out


def _attr(event: dict[str, Any], key: str) -> Any:
    value = next(a["value"] for a in event["attributes"] if a["key"] == key)
    return next(iter(value.values()))


def test_a_compaction_asked_for_or_after_an_overflow_says_so(steps: list[ReplayStep]) -> None:
    fired = next(s for s in steps if s.compaction)
    asked = [
        dataclasses.replace(fired, manifest=dataclasses.replace(fired.manifest, purpose=purpose))
        for purpose in ("compaction", "recovery")
    ]
    events = compaction_events([fired, *asked])
    assert [(e["trigger"], e["reason"]) for e in events] == [
        ("automatic", "tokens"),
        ("manual", None),
        ("overflow", None),
    ]


def test_a_session_without_a_clock_goes_out_without_one(
    transcript: ctxlab.Transcript, tmp_path: Path
) -> None:
    # No time is made up for a reply the recording did not date; the spans keep their order.
    undated = dataclasses.replace(transcript, times={})
    back = ctxlab.load(write_otel(undated, tmp_path / "trace.json"))
    assert back.times == {}
    last = max(i for i, m in enumerate(transcript.messages) if m.role == "assistant")
    assert _texts(back)[: last + 1] == _texts(transcript)[: last + 1]
    # A reply without a time amid dated ones takes the start before it (its order kept).
    times = dict(transcript.times)
    second = sorted(times)[1]
    del times[second]
    partly = ctxlab.load(
        write_otel(dataclasses.replace(transcript, times=times), tmp_path / "p.json")
    )
    assert _texts(partly)[: last + 1] == _texts(transcript)[: last + 1]


def test_loaded_events_travel_on_from_one_format_to_the_other(
    transcript: ctxlab.Transcript, steps: list[ReplayStep], tmp_path: Path
) -> None:
    # OTel → ctxlab → ATIF → ctxlab → OTel → ctxlab: the events, and where they sit, unchanged.
    expected = compaction_events(steps)
    assert [e["reply"] for e in expected] == [s.index for s in steps]
    traced = ctxlab.load(write_otel(transcript, tmp_path / "a.json", steps=steps))
    atif = ctxlab.load(write_atif(traced, tmp_path / "b.json"))
    again = ctxlab.load(write_otel(atif, tmp_path / "c.json"))
    for loaded in (atif, again):
        events = [
            {k: v for k, v in e.items() if k != "conversation"}
            for e in loaded.meta["compaction_events"]
        ]
        assert events == expected
        census = loaded.census
        assert census is not None and census.adds_up and census.unaccounted == {}


def test_a_compaction_an_on_demand_rule_asked_for_goes_out_and_back_as_asked(
    transcript: ctxlab.Transcript, steps: list[ReplayStep], tmp_path: Path
) -> None:
    # Asked every 4 requests, in a window large enough that the trigger never fires: every
    # compaction is an ask, and its event says so with the rule (the control: the module's
    # threshold replay, whose compactions are automatic and name no rule).
    config = ContextConfig(on_demand=OnDemandCompaction(every_requests=4))
    asked = _steps(transcript, 200_000, config=config)
    events = [e for e in compaction_events(asked) if e["fired"]]
    assert len(events) >= 2
    assert {(e["trigger"], e["reason"], e["asked"]) for e in events} == {
        ("on_demand", None, "requests")
    }
    assert all(e["asked"] is None for e in compaction_events(steps))
    assert {e["trigger"] for e in compaction_events(steps) if e["fired"]} == {"automatic"}
    path = write_otel(transcript, tmp_path / "asked.json", steps=asked)
    back = [
        {k: v for k, v in e.items() if k != "conversation"}
        for e in ctxlab.load(path).meta["compaction_events"]
    ]
    assert back == compaction_events(asked)


def test_a_reply_and_a_tool_go_out_in_the_shape_the_conventions_require(
    transcript: ctxlab.Transcript, tmp_path: Path
) -> None:
    # Phoenix (20.26, run against this export) validates `gen_ai.output.messages` and
    # `gen_ai.tool.definitions` against the conventions' schemas and drops the whole list when
    # one item is out of shape: an output message needs its `finish_reason`, a tool definition
    # its `name` at the top (not Chat Completions' nested `function`). A reply repeated in a
    # later request's input keeps the same shape.
    tool = ToolSchema(
        name="Bash",
        description="Run a command",
        input_schema={"type": "object", "properties": {"command": {"type": "string"}}},
    )
    # The fixture's replies all call tools: a last one that does not is added.
    done = AssistantMessage(content=(TextBlock(text="Done."),))
    tooled = dataclasses.replace(
        transcript, messages=(*transcript.messages, done), system="Be terse.", tools=(tool,)
    )
    spans = to_otel(tooled)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    reasons = []
    for span in spans:
        attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        for message in json.loads(attrs["gen_ai.output.messages"]):
            calls = any(p["type"] == "tool_call" for p in message["parts"])
            assert message["finish_reason"] == ("tool_call" if calls else "stop")
            reasons.append(message["finish_reason"])
        for message in json.loads(attrs["gen_ai.input.messages"]):
            calls = any(p["type"] == "tool_call" for p in message["parts"])
            reason = ("tool_call" if calls else "stop") if message["role"] == "assistant" else None
            assert message.get("finish_reason") == reason
        assert json.loads(attrs["gen_ai.tool.definitions"]) == [
            {
                "type": "function",
                "name": "Bash",
                "description": "Run a command",
                "parameters": tool.input_schema,
            }
        ]
    assert set(reasons) == {"stop", "tool_call"}  # both kinds are exercised
    back = ctxlab.load(write_otel(tooled, tmp_path / "trace.json"))
    assert back.tools == (tool,) and back.system == "Be terse."
    assert _texts(back) == _texts(tooled)  # it ends on a reply: every message went out


def test_the_events_read_back_in_request_order_from_spans_listed_newest_first(
    transcript: ctxlab.Transcript, steps: list[ReplayStep], tmp_path: Path
) -> None:
    # Phoenix's REST answer (`GET /v1/projects/{project}/spans`) lists the spans newest first:
    # the events come back in the order of the requests, not of the file.
    data = to_otel(transcript, steps=steps)
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.reverse()
    path = tmp_path / "newest_first.json"
    path.write_text(json.dumps(data))
    back = ctxlab.load(path)
    read = [
        {k: v for k, v in e.items() if k != "conversation"} for e in back.meta["compaction_events"]
    ]
    assert read == compaction_events(steps)
    # Undated (every span at start 0, as a session without a clock goes out): the same.
    for span in spans:
        span["startTimeUnixNano"] = "0"
        for event in span["events"]:
            event["timeUnixNano"] = "0"
    path.write_text(json.dumps(data))
    read = [
        {k: v for k, v in e.items() if k != "conversation"}
        for e in ctxlab.load(path).meta["compaction_events"]
    ]
    assert read == compaction_events(steps)
