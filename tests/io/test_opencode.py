"""OpenCode sessions (``tests/fixtures/opencode``, hand-made from OpenCode's own types), from
``opencode export`` and from OpenCode's storage: one request per step, with its step's usage,
calls and results as ``toModelMessages`` sends them — checked against the test's own reading of
the raw messages and parts —, its compaction recorded, its failed request not sent, the storage's
many files listed as one session, and hostile exports refused with a typed error or loaded with
their losses counted (the export mutated: `test_mutated_documents`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import ctxlab
from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.messages import ProviderUsage

FOLDER = Path(__file__).parents[1] / "fixtures" / "opencode"
EXPORT = FOLDER / "export.json"
STORED = next((FOLDER / "storage" / "session").glob("*/*.json"))


def _raw() -> dict[str, Any]:
    return json.loads(EXPORT.read_text())


def test_an_export_loads_one_request_per_step() -> None:
    messages = _raw()["messages"]
    transcript = load(EXPORT)
    assert transcript.meta["source"] == "opencode"
    sent = [
        m
        for m in messages
        if not (
            m["info"]["role"] == "assistant"
            and m["info"].get("error", {}).get("name") == "APIError"
        )
    ]
    finishes = [
        p["tokens"]
        for m in sent
        if m["info"]["role"] == "assistant"
        for p in m["parts"]
        if p["type"] == "step-finish"
    ]
    # The test's own reading: a step-finish closes each model call.
    assert sum(m.role == "assistant" for m in transcript.messages) == len(finishes)
    expected = [
        ProviderUsage(
            t["input"], t["output"] + t["reasoning"], t["cache"]["read"], t["cache"]["write"]
        )
        for t in finishes
    ]
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    tools = [p for m in sent for p in m["parts"] if p["type"] == "tool"]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == [p["callID"] for p in tools]
    results = {
        b.tool_use_id: b for m in transcript.messages if m.role == "user" for b in m.tool_results
    }
    for part in tools:
        state = part["state"]
        result = results[part["callID"]]
        if state["status"] == "completed":
            cleared = "compacted" in state["time"]
            assert result.text == (
                "[Old tool result content cleared]" if cleared else state["output"]
            )
            assert not result.is_error
        elif state["status"] == "error":
            assert result.is_error and result.text == state["error"]
        else:
            assert result.is_error and result.text == "[Tool execution was interrupted]"
    skipped = transcript.meta["skipped"]
    assert skipped["failed reply (not sent again)"] == len(messages) - len(sent)
    assert skipped["ignored text part"] == 1 and skipped["patch part"] == 1
    # What the user's message sent: its texts but the ignored one; the plain-text file as text.
    first = [b.text for b in transcript.messages[0].content]  # type: ignore[union-attr]
    assert first == [
        p["text"] for p in messages[0]["parts"] if p["type"] == "text" and not p.get("ignored")
    ]


def test_the_stored_session_is_the_same_as_its_export() -> None:
    stored, exported = load(STORED), load(EXPORT)
    assert stored.messages == exported.messages and stored.usage == exported.usage
    assert stored.name == STORED.stem


def test_opencodes_compaction_is_recorded() -> None:
    transcript = load(EXPORT)
    (compaction,) = recorded_compactions(transcript)
    assert (
        transcript.messages[compaction.index].content[compaction.block].text
        == "What did we do so far?"
    )  # type: ignore[union-attr]


def test_the_storage_is_listed_as_one_session(tmp_path: Path) -> None:
    shutil.copytree(FOLDER / "storage", tmp_path / "opencode" / "storage")
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["format"].tolist() == ["opencode"] and frame["problem"].isna().all()
    assert frame["path"].tolist() == [
        str(tmp_path / "opencode" / "storage" / STORED.relative_to(FOLDER / "storage"))
    ]
