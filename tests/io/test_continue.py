"""Continue sessions (``tests/fixtures/continue``, hand-made from Continue's own types by
``make_fixture.py``): the request Continue builds from each history item — context items before
the user's words, tool results rendered from the calls' states, the CLI's calls kept only in
their states, one state per item before July 2025 — with each reply's usage, checked against the
test's own reading of the raw file; ``sessions.json`` is not a session; hostile variants load
or raise a typed error (the fixture mutated or cut short: `test_census_mutations`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import ctxlab
from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.io import detect_format
from ctxlab.messages import ProviderUsage

FOLDER = Path(__file__).parents[1] / "fixtures" / "continue" / "sessions"
FIXTURE = FOLDER / "7c1e2a4b-5d6f-4a8b-9c0d-1e2f3a4b5c6d.json"


def _raw() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def _calls(item: dict[str, Any]) -> list[str]:
    # The test's own reading: a reply's calls, from the message or (the CLI) from its states.
    calls = item["message"].get("toolCalls") or [
        s["toolCall"] for s in item.get("toolCallStates") or []
    ]
    return [c["id"] for c in calls]


def test_a_session_loads_as_continue_sends_it() -> None:
    session = _raw()
    transcript = load(FIXTURE)
    assert transcript.meta["source"] == "continue" and transcript.name == session["sessionId"]
    history = session["history"]
    replies = [i for i in history if i["message"]["role"] == "assistant"]
    assert sum(m.role == "assistant" for m in transcript.messages) == len(replies)
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == [c for item in replies for c in _calls(item)]
    results = {
        b.tool_use_id: b for m in transcript.messages if m.role == "user" for b in m.tool_results
    }
    assert sorted(results) == sorted(uses)  # every call answered from its state
    assert results["toolu_g1"].text == "The user cancelled this tool call."
    assert (
        results["toolu_t1"].is_error
        and results["toolu_t1"].text == "1 failed\n[Status: exit code 1]"
    )
    assert results["call_o1"].text == "# Shop"
    # Context items are sent before the user's own words.
    first = transcript.messages[0]
    assert first.content[0].text.startswith("```python cart.py")  # type: ignore[union-attr]
    assert first.content[1].text == history[1]["message"]["content"][0]["text"]  # type: ignore[union-attr]
    assert transcript.system == history[0]["message"]["content"]
    # Every item is used or counted: the tool message (its result comes from the state), the
    # prompt log, the empty user message.
    skipped = transcript.meta["skipped"]
    assert skipped["tool message (the result comes from its call's state)"] == sum(
        i["message"]["role"] == "tool" for i in history
    )
    assert skipped["prompt log"] == sum(len(i.get("promptLogs") or ()) for i in history)
    assert skipped["empty message"] == 1


def test_each_replys_usage_as_its_provider_counts_it() -> None:
    transcript = load(FIXTURE)
    expected = []
    for item in _raw()["history"]:
        usage = item["message"].get("usage")
        if item["message"]["role"] != "assistant" or not usage:
            continue
        details = usage.get("promptTokensDetails", {})
        cached, written = details.get("cachedTokens", 0), details.get("cacheWriteTokens", 0)
        if "cacheWriteTokens" in details:  # Anthropic: the cache outside the prompt count
            expected.append(
                ProviderUsage(usage["promptTokens"], usage["completionTokens"], cached, written)
            )
        else:
            prompt = usage["promptTokens"] - cached
            expected.append(ProviderUsage(prompt, usage["completionTokens"], cached, 0))
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    assert transcript.meta["session_usage"]["totalCost"] == 0.031  # kept, not spread


def test_the_summary_is_a_recorded_compaction() -> None:
    transcript = load(FIXTURE)
    (compaction,) = recorded_compactions(transcript)
    block = transcript.messages[compaction.index].content[compaction.block]
    assert block.text.startswith("The user asked why total()")  # type: ignore[union-attr]
    assert compaction.index == 6


def test_detected_and_listed_without_its_index(tmp_path: Path) -> None:
    assert detect_format(_raw()) == "continue"
    shutil.copytree(FOLDER, tmp_path / "sessions")
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["format"].tolist() == ["continue"] and frame["problem"].isna().all()
