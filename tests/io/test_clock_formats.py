"""Each format's clock, on its fixture, against a reading of the file written here that knows
the format's time field and nothing of ctxlab's importer: every dated reply's time is the
file's own, in the file's own unit. (Claude Code: `test_clock_claude_code`.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _iso(text: str) -> float:
    """ISO 8601 as the tools write it; no zone is UTC (the rule the importers state)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _in_order(transcript: Transcript) -> list[float]:
    return [transcript.times[i] for i in sorted(transcript.times)]


def _replies(transcript: Transcript) -> list[AssistantMessage]:
    return [m for m in transcript.messages if isinstance(m, AssistantMessage)]


def _key(reply: AssistantMessage) -> str:
    """What a reply's first block is known by in its file: a call's id, a text, reasoning."""
    block = reply.content[0]
    if isinstance(block, ToolUseBlock):
        return block.id
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, RedactedThinkingBlock):
        return block.data
    if isinstance(block, ThinkingBlock):
        return block.thinking
    raise AssertionError(f"a reply opening with {block!r}")


def _fixtures(folder: str, *names: str) -> pytest.MarkDecorator:
    """A test over these fixtures of ``tests/fixtures/<folder>``, as ``path``, each by its name."""
    return pytest.mark.parametrize("path", [FIXTURES / folder / n for n in names], ids=names)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- Codex: each reply dated by the line of its request's first item ---------------------------


def _codex_items(path: Path) -> dict[str, float]:
    # Each model item's line time, by what the item is known by.
    found: dict[str, float] = {}
    for line in _lines(path):
        item = line["payload"] if line["type"] == "response_item" else {}
        keys = [item.get("call_id"), item.get("encrypted_content")]
        keys += [c.get("text") for c in item.get("content") or () if isinstance(c, dict)]
        for key in keys:
            if isinstance(key, str) and key.strip():
                found.setdefault(
                    key.strip() if key.strip() != key else key, _iso(line["timestamp"])
                )
    return found


@_fixtures(
    "codex",
    "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl",
    "rollout-0.40.0-usage-before.jsonl",
    "rollout-current-usage-after.jsonl",
)
def test_codex_replies_are_dated_by_their_first_items_line(path: Path) -> None:
    transcript = load(path)
    items = _codex_items(path)
    expected = [items[_key(reply)] for reply in _replies(transcript)]
    assert _in_order(transcript) == pytest.approx(expected, abs=1e-6)
    assert len(transcript.times) == len(_replies(transcript)) == (18 if "2025" in path.name else 3)


def test_codex_exec_records_no_time() -> None:
    for name in ("exec-0.60.jsonl", "exec-0.30.jsonl"):
        assert load(FIXTURES / "codex_exec" / name).times == {}


# --- Gemini CLI: each gemini record's timestamp ------------------------------------------------


@_fixtures(
    "gemini",
    "session-2025-10-11T13-00-2d9ea14f.json",
    "session-2026-03-02T10-00-4a1c.jsonl",
    "session-legacy.json",
    "aim/control_pro.json",
)
def test_gemini_cli_replies_are_dated_by_their_records(path: Path) -> None:
    text = path.read_text()
    records: list[Any] = []
    if path.suffix == ".jsonl":
        for line in (json.loads(x) for x in text.splitlines() if x.strip()):
            if "type" in line and "id" in line:
                records = [r for r in records if r["id"] != line["id"]] + [line]
    else:
        document = json.loads(text)
        records = document["messages"] if isinstance(document, dict) else document
    replies = [
        r
        for r in records
        if r.get("type") == "gemini" and (_said(r.get("content")) or r.get("toolCalls"))
    ]
    transcript = load(path)
    assert _in_order(transcript) == pytest.approx([_iso(r["timestamp"]) for r in replies])


def _said(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return bool(content)


def test_gemini_stream_json_dates_a_reply_by_its_first_event() -> None:
    path = FIXTURES / "gemini_stream" / "stream-json.jsonl"
    expected: list[float] = []
    in_reply = False
    for event in _lines(path):
        starts = event["type"] == "tool_use" or (
            event["type"] == "message" and event.get("role") == "assistant"
        )
        if starts and not in_reply:
            expected.append(_iso(event["timestamp"]))
        in_reply = starts or (in_reply and event["type"] not in ("tool_result", "message"))
    assert _in_order(load(path)) == pytest.approx(expected)
    assert len(expected) == 3


# --- Copilot, OpenHands, Goose, opencode, Cline: their own stamps --------------------------------


def test_copilot_replies_are_dated_by_their_first_event() -> None:
    for folder in (FIXTURES / "copilot" / "session-state").iterdir():
        path = folder / "events.jsonl"
        expected: list[float] = []
        previous = None
        for event in _lines(path):
            if event.get("agentId"):
                continue
            kind = event["type"]
            replying = kind in ("assistant.message", "assistant.reasoning")
            if replying and previous not in ("assistant.message", "assistant.reasoning"):
                data = event["data"]
                if kind == "assistant.reasoning" or data.get("content") or data.get("toolRequests"):
                    expected.append(_iso(event["timestamp"]))
            if kind not in ("assistant.usage",):
                previous = kind
        assert _in_order(load(path)) == pytest.approx(expected), folder.name


def test_openhands_events_date_each_agent_action_by_its_timestamp() -> None:
    events = json.loads((FIXTURES / "openhands" / "trajectory.json").read_text())
    expected: list[float] = []
    responses: set[str] = set()
    for event in events:
        if event.get("source") != "agent" or "action" not in event:
            continue
        response = (event.get("tool_call_metadata") or {}).get("model_response", {}).get("id")
        if response not in responses and (response or event["action"] == "finish"):
            expected.append(_iso(event["timestamp"]))  # a response's first action
        responses.add(response)
    for name in ("trajectory.json", "output.jsonl"):
        assert _in_order(load(FIXTURES / "openhands" / name)) == pytest.approx(expected)


def test_an_openhands_v1_conversation_dates_replies_by_their_events() -> None:
    folder = FIXTURES / "openhands" / "v1" / "conversation" / "5b0e7c1a-0d4f-4c3e-9a2b-7f1e6d5c4b3a"
    events = [json.loads(p.read_text()) for p in sorted((folder / "events").glob("event-*.json"))]
    expected: list[float] = []
    response = None
    for event in events:
        new_call = event["kind"] == "ActionEvent" and event.get("llm_response_id") != response
        said = event["kind"] == "MessageEvent" and event["llm_message"]["role"] == "assistant"
        if new_call or said:
            expected.append(_iso(event["timestamp"]))
        response = event.get("llm_response_id") if event["kind"] == "ActionEvent" else None
    assert _in_order(load(folder)) == pytest.approx(expected)


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_a_completion_log_dates_its_own_reply_only(version: str) -> None:
    for path in sorted((FIXTURES / "openhands" / version).rglob("*.json")):
        if "conversation" in path.parts:
            continue
        log = json.loads(path.read_text())
        transcript = load(path)
        last = max(i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage))
        # ``time.time()`` after the call: the only time the log holds.
        assert transcript.times == {last: pytest.approx(log["timestamp"])}, path.name


def test_goose_replies_are_dated_by_created_seconds() -> None:
    path = FIXTURES / "goose" / "20250514_103000.jsonl"
    messages = [m for m in _lines(path) if m.get("role") == "assistant"]
    expected = [float(m["created"]) for m in messages]
    assert _in_order(load(path)) == expected
    export = json.loads((FIXTURES / "goose" / "export.json").read_text())
    screen = {
        "toolConfirmationRequest",
        "actionRequired",
        "frontendToolRequest",
        "systemNotification",
    }
    said = [
        m
        for m in export["conversation"]
        if m.get("role") == "assistant" and any(c["type"] not in screen for c in m["content"])
    ]
    assert _in_order(load(FIXTURES / "goose" / "export.json")) == [
        float(m["created"]) for m in said
    ]


def test_cline_replies_are_dated_by_their_ts_in_milliseconds() -> None:
    for app in ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline"):
        (task,) = (FIXTURES / "cline" / app / "tasks").iterdir()
        history = json.loads((task / "api_conversation_history.json").read_text())
        expected = [m["ts"] / 1000 for m in history if m.get("role") == "assistant"]
        assert _in_order(load(task)) == pytest.approx(expected), app


def test_a_cline_history_without_ts_is_dated_by_its_requests() -> None:
    # Kilo Code of August 2025: no ``ts`` in the history; each request's UI ``ts`` (when it
    # started), paired as its usage is (here in order).
    (task,) = (FIXTURES / "cline" / "kilocode.kilo-code" / "tasks").iterdir()
    ui = json.loads((task / "ui_messages.json").read_text())
    started = [m["ts"] / 1000 for m in ui if m.get("say") == "api_req_started"]
    assert _in_order(load(task)) == pytest.approx(started)


def test_opencode_steps_are_dated_by_their_first_timed_part() -> None:
    export = json.loads((FIXTURES / "opencode" / "export.json").read_text())
    transcript = load(FIXTURES / "opencode" / "export.json")
    created = [
        m["info"]["time"]["created"] / 1000
        for m in export["messages"]
        if m["info"]["role"] == "assistant"
    ]
    # Every dated reply falls at a time the file holds for an assistant message's step.
    assert set(_in_order(transcript)) <= set(created)
    assert len(transcript.times) == 5


# --- Inspect, Letta, smolagents, AutoGen, traces: what the libraries wrote ---------------------


@pytest.mark.parametrize("name", ["add.json", "add.eval"])
def test_inspect_replies_are_dated_by_their_model_events(name: str) -> None:
    from ctxlab.io.formats.inspect.parse import (
        read_eval_zip,  # the zip's own entries, as Inspect wrote them
    )

    path = FIXTURES / "inspect" / name
    log = json.loads(path.read_text()) if name.endswith(".json") else read_eval_zip(path)
    for episode, sample in enumerate(log["samples"]):
        models = [e for e in sample["events"] if e.get("event") == "model"]
        expected = [_iso(e["timestamp"]) for e in models]
        assert _in_order(load(path, episode=episode)) == pytest.approx(expected), episode


@pytest.mark.parametrize(
    "name",
    ["outreach_workflow_agent.af", "composio_github_star_agent.af", "lettabot-builder.af"],
)
def test_letta_replies_are_dated_by_created_at(name: str) -> None:
    path = FIXTURES / "letta" / name
    data = json.loads(path.read_text())
    agent = data["agents"][0] if "agents" in data else data
    messages = agent["messages"]
    heard = False
    expected: list[float] = []
    for message in messages:
        heard = heard or message["role"] == "user"
        if message["role"] == "assistant" and heard:
            expected.append(_iso(message["created_at"]))
    transcript = load(path)
    assert _in_order(transcript) == pytest.approx(expected)
    assert expected


@pytest.mark.parametrize("name", ["tool_calling_steps.json", "code_steps.json"])
def test_smolagents_replies_are_dated_by_their_steps_start(name: str) -> None:
    steps = json.loads((FIXTURES / "smolagents" / name).read_text())
    expected = [
        s["timing"]["start_time"]
        for s in steps
        if ("plan" in s or "step_number" in s)
        and (s.get("model_output") or s.get("plan") or s.get("tool_calls"))
    ]
    assert _in_order(load(FIXTURES / "smolagents" / name)) == pytest.approx(expected)


def test_autogen_replies_are_dated_by_their_calls_messages() -> None:
    path = FIXTURES / "autogen" / "team_state.json"
    state = json.loads(path.read_text())
    thread = next(
        v["message_thread"] for v in state["agent_states"].values() if "message_thread" in v
    )
    for episode, name in enumerate(("coder", "reviewer")):
        calls = [m for m in thread if m["source"] == name and m.get("models_usage")]
        expected = [_iso(m["created_at"]) for m in calls]
        assert _in_order(load(path, episode=episode)) == pytest.approx(expected), name
    # An agent's own state holds no thread: no clock.
    assert load(FIXTURES / "autogen" / "coder_state.json").times == {}


@pytest.mark.parametrize(
    "path",
    [
        "openllmetry/openai_spans.json",
        "langfuse/langfuse_spans.json",
        "openai_agents/chat_trace.json",
        "vercel_ai/vercel_ai_otlp.json",
    ],
)
def test_a_traces_replies_are_dated_by_their_spans_start(path: str) -> None:
    transcript = load(FIXTURES / path)
    starts = sorted(_span_starts(json.loads((FIXTURES / path).read_text())))
    # Each dated reply starts when one of the trace's spans did (nanoseconds, or the SDK's
    # ISO text), in order.
    times = _in_order(transcript)
    assert len(times) == len(_replies(transcript)) == 2
    assert all(any(abs(t - s) < 1e-5 for s in starts) for t in times)
    assert times == sorted(times)


def _span_starts(value: Any) -> list[float]:
    # Every start a span export holds, whatever its shape: the SDK's ``start_time`` (ISO), OTLP's
    # ``startTimeUnixNano``, OpenTelemetry JS's ``[seconds, nanoseconds]``, the Agents SDK's
    # ``started_at``.
    found: list[float] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("start_time", "started_at") and isinstance(item, str):
                found.append(_iso(item))
            elif key == "startTimeUnixNano":
                found.append(int(item) / 1e9)
            elif key == "startTime" and isinstance(item, list):
                found.append(item[0] + item[1] / 1e9)
            else:
                found += _span_starts(item)
    elif isinstance(value, list):
        for item in value:
            found += _span_starts(item)
    return found


# --- SpecStory: a header's time dates the section's first reply --------------------------------


def test_specstory_dates_the_first_reply_of_each_dated_agent_header() -> None:
    path = FIXTURES / "specstory" / "2026-08-03_21-15-01Z-use-claude-commands-code.md"
    # ``_**Agent (gpt-5.6-sol 2026-08-03 21:15:04Z)**_``: the header's last two words. A
    # section opens a reply unless the agent's section before it ended on no tool use (its
    # words then go on in the next: one response shown as two messages).
    dates: list[str] = []
    open_reply = False
    for line in path.read_text().splitlines():
        if line.startswith("_**User"):
            open_reply = False
        elif line.startswith("_**Agent ("):
            if not open_reply:
                dates.append(" ".join(line.rstrip()[: -len(")**_")].split()[-2:]))
            open_reply = True
        elif line.startswith("<tool-use"):
            open_reply = False
    transcript = load(path)
    assert len(dates) == 9
    assert _in_order(transcript) == [_iso(d.replace(" ", "T")) for d in dates]
    # A header without a time (the 2025 layouts) leaves its replies undated.
    assert load(FIXTURES / "specstory" / "2025-03-11_20-11-parking-page.md").times == {}
