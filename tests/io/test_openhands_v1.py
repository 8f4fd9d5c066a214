"""OpenHands V1 (the software agent SDK): a conversation folder (hand-written from the SDK's event
types, tests/fixtures/openhands/v1/make_conversation.py) and two real completion logs of the SDK's
own test data (MIT), each checked against the test's own reading of the files."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load, sessions
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage, find_tool_pair_problems
from tests.helpers import validations
from tests.io.shown import added_up

V1 = Path(__file__).parents[1] / "fixtures" / "openhands" / "v1"
FOLDER = V1 / "conversation" / "5b0e7c1a-0d4f-4c3e-9a2b-7f1e6d5c4b3a"
LOGS = sorted((V1 / "logs").glob("*.json"))


def test_a_conversation_folder_loads_whole_with_each_replys_usage_by_response_id() -> None:
    transcript = load(FOLDER)
    assert transcript.meta["source"] == "openhands" and transcript.meta["version"] == 1
    assert transcript.system == "You are OpenHands agent."
    assert [t.name for t in transcript.tools] == ["terminal", "file_editor"]
    # Two parallel calls of one response are one reply; the error is the third call's result.
    replies = [m for m in transcript.messages if m.role == "assistant"]
    assert [[u.id for u in r.tool_uses] for r in replies] == [
        ["toolu_01", "toolu_02"],
        ["toolu_03"],
        [],
    ]
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert [(r.tool_use_id, bool(r.is_error)) for r in results] == [
        ("toolu_01", False),
        ("toolu_02", False),
        ("toolu_03", True),
    ]
    assert find_tool_pair_problems(transcript.messages) == []
    # The test's own reading of the files: events by kind, and each response's token usage.
    events = [json.loads(p.read_text()) for p in sorted((FOLDER / "events").glob("event-*.json"))]
    state = json.loads((FOLDER / "base_state.json").read_text())
    usages = {
        u["response_id"]: u
        for m in state["stats"]["usage_to_metrics"].values()
        for u in m["token_usages"]
    }
    census = added_up(transcript)
    assert census.read == dict(Counter(e["kind"] for e in events))
    billed = [
        usages[e["llm_response_id"]]
        for e in events
        if e["kind"] in ("ActionEvent", "MessageEvent") and e.get("llm_response_id")
    ]
    firsts = list({id(u): u for u in billed}.values())  # one reply per response
    assert [
        transcript.usage[i] for i, m in enumerate(transcript.messages) if m.role == "assistant"
    ] == [
        ProviderUsage(
            u["prompt_tokens"] - u["cache_read_tokens"],
            u["completion_tokens"],
            u["cache_read_tokens"],
        )
        for u in firsts
    ]
    # The condenser's own completion has no reply among the events: counted, not placed.
    assert census.usage_lost == {"a completion with no reply among the events": 1}
    # Each response's reasoning kept on its reply, once (the fixture repeats it on a parallel
    # call; the SDK writes it on a response's first call).
    thinking = [
        [b.thinking for b in m.content if b.type == "thinking"]  # type: ignore[union-attr]
        for m in transcript.messages
        if m.role == "assistant"
    ]
    reasoning = [e["llm_message"]["reasoning_content"] for e in events if e["id"].endswith("9")]
    assert thinking == [[events[2]["thinking_blocks"][0]["thinking"]], [], reasoning]
    assert census.left_out == {"the same reasoning on another call of its response": 1}


def test_parallel_calls_stay_one_reply_when_a_result_comes_between(tmp_path: Path) -> None:
    events = [json.loads(p.read_text()) for p in sorted((FOLDER / "events").glob("event-*.json"))]
    # The second call of the first response after the first call's result.
    kinds = [e["kind"] for e in events]
    first = kinds.index("ObservationEvent")
    events.insert(first + 1, events.pop(first - 1))
    folder = tmp_path / "conversation"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text((FOLDER / "base_state.json").read_text())
    for index, event in enumerate(events):
        (folder / "events" / f"event-{index:05d}-{event['id']}.json").write_text(json.dumps(event))
    transcript = load(folder)
    assert transcript.messages == load(FOLDER).messages
    assert find_tool_pair_problems(transcript.messages) == []


def test_the_base_state_file_opens_the_conversation_and_an_event_file_points_to_it() -> None:
    assert load(FOLDER / "base_state.json").messages == load(FOLDER).messages
    one = next((FOLDER / "events").glob("event-*.json"))
    with pytest.raises(MessageFormatError, match="one event of an OpenHands V1 conversation"):
        load(one)


def test_sessions_lists_a_conversation_once_not_every_event_file() -> None:
    frame = sessions(V1 / "conversation", progress=False, workers=1)
    assert frame["path"].tolist() == [str(FOLDER / "base_state.json")]
    assert frame["problem"].isna().all() and frame["requests"].tolist() == [3]


def test_a_conversation_folder_without_its_base_state_loads_its_events_and_says_so(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "runs" / "cli-conversation"
    shutil.copytree(FOLDER / "events", folder / "events")
    whole = load(FOLDER)
    assert whole.census is not None
    for path in (folder, folder / "events"):
        transcript = load(path)
        # The events alone: the same conversation, named for its folder, with no usage.
        assert transcript.messages == whole.messages and transcript.system == whole.system
        assert transcript.name == "cli-conversation" and transcript.usage == {}
        assert transcript.meta["usage_missing"].startswith("no base_state.json")
        census = transcript.census
        assert census is not None and census.adds_up and census.read == whole.census.read
    # Listed once, as the folder (which load opens), not once per event file.
    frame = sessions(tmp_path, progress=False, workers=1)
    assert frame["path"].tolist() == [str(folder)]
    assert frame["problem"].isna().all() and frame["requests"].tolist() == [3]
    # An event file still points to the folder it belongs to.
    one = next((folder / "events").glob("event-*.json"))
    with pytest.raises(MessageFormatError, match="load the conversation's folder"):
        load(one)


@pytest.mark.parametrize("path", LOGS, ids=[p.name[:40] for p in LOGS])
async def test_a_completion_log_keeps_the_logged_response_and_its_usage(path: Path) -> None:
    log = json.loads(path.read_text())
    transcript = load(path)
    assert transcript.meta["source"] == "openhands"
    # The messages sent, then the logged response: its text and calls, with its usage.
    reply = log["response"]["choices"][0]["message"]
    # (its calls' results, not logged, are answered by the repair after it)
    index = max(i for i, m in enumerate(transcript.messages) if m.role == "assistant")
    last = transcript.messages[index]
    assert [u.id for u in last.tool_uses] == calls_of(reply)  # type: ignore[union-attr]
    usage = log["response"]["usage"]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    assert transcript.usage[index] == ProviderUsage(
        usage["prompt_tokens"] - cached, usage["completion_tokens"], cached
    )
    # With prompted calling the turns with their calls are ``raw_messages``; ``messages`` and
    # ``raw_response`` are the same call as text, read and counted.
    calls = log.get("raw_messages", log["messages"])
    sent = [m for m in calls if m["role"] != "system"]
    census = added_up(transcript)
    text = len(log["messages"]) + 1 if "raw_messages" in log else 0
    assert sum(census.read.values()) == len(calls) + 1 + text
    assert sum(m.role == "assistant" for m in transcript.messages) == 1 + sum(
        m["role"] == "assistant" for m in sent
    )
    # With prompted calling the tools were described in the System text the model read.
    system = log["messages"][0]["content"]
    assert transcript.system == (system if isinstance(system, str) else system[0]["text"])
    assert bool(transcript.tools) == ("raw_messages" not in log)
    history = [c["id"] for m in sent for c in m.get("tool_calls") or ()]
    uses = [u.id for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert uses == [*history, *calls_of(reply)]
    for window in (200_000, 32_000):
        steps = await validations(transcript, window)
        assert steps and set(steps) == {"passed"}


def calls_of(message: dict[str, Any]) -> list[str]:
    return [c["id"] for c in message.get("tool_calls") or ()]


def test_a_conversation_with_no_event_yet_says_so(tmp_path: Path) -> None:
    # A V1 CLI conversation folder as the SDK leaves it before the first event: its
    # base_state.json alone. Loaded by its folder or its file, one clear error (not "a folder:
    # list it with sessions()", which then could not tell the file's format).
    folder = tmp_path / "conversation"
    folder.mkdir()
    (folder / "base_state.json").write_text(json.dumps({"id": "c1", "agent": {}}))
    for source in (folder, folder / "base_state.json"):
        with pytest.raises(MessageFormatError, match="no event yet"):
            load(source)
    rows = sessions(tmp_path, progress=False, workers=1)
    assert len(rows) == 1 and "no event yet" in rows["problem"].iloc[0]
