"""Goose sessions (``tests/fixtures/goose``, hand-made from Goose's own types): the session file
Goose kept to 1.9 and ``goose session export`` output — messages, calls and results as the
model saw them, checked against the test's own reading of the raw file; the messages Goose
later hid from the agent kept and counted, its summary a recorded compaction, the session's
usage kept as the totals it is; hostile sessions refused with a typed error or loaded with
their losses counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxlab
from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.io import detect_format
from tests.io.mutate import loads_or_refuses, mutated
from tests.strategies import SETTINGS

FOLDER = Path(__file__).parents[1] / "fixtures" / "goose"
LEGACY = FOLDER / "20250514_103000.jsonl"
EXPORT = FOLDER / "export.json"
SCREEN = {"toolConfirmationRequest", "actionRequired", "frontendToolRequest", "systemNotification"}


def _messages(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if path.suffix == ".jsonl":
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return lines[0], lines[1:]
    session = json.loads(path.read_text())
    return session, session["conversation"]


@pytest.mark.parametrize("path", [LEGACY, EXPORT], ids=["legacy", "export"])
def test_a_session_loads_as_the_model_saw_it(path: Path) -> None:
    session, messages = _messages(path)
    transcript = load(path)
    assert transcript.meta["source"] == "goose"
    items = [c for m in messages for c in m["content"]]
    calls = [c["id"] for c in items if c["type"] == "toolRequest"]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == calls
    answered = [c for c in items if c["type"] == "toolResponse"]
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    assert [r.tool_use_id for r in results] == [c["id"] for c in answered]
    failed = [
        c["toolResult"]["status"] == "error"
        or (
            isinstance(c["toolResult"].get("value"), dict)
            and c["toolResult"]["value"].get("isError") is True
        )
        for c in answered
    ]
    assert [bool(r.is_error) for r in results] == failed
    texts = []
    for c in answered:
        result = c["toolResult"]
        if result["status"] == "error":
            texts.append(result["error"])
        else:
            value = result["value"]
            content = value["content"] if isinstance(value, dict) else value  # before 1.0: a list
            texts.append("\n".join(p["text"] for p in content))
    assert [r.text for r in results] == texts
    # Items for the screen only are counted, never sent.
    screen = [c for c in items if c["type"] in SCREEN]
    skipped = transcript.meta.get("skipped", {})
    alone = [m for m in messages if all(c["type"] in SCREEN for c in m["content"])]
    counted = sum(v for k, v in skipped.items() if k.endswith(" item"))
    assert counted + len(alone) == len(screen)
    assert skipped.get("message only the user sees", 0) == len(alone)
    # Usage is the session's, not per request.
    assert transcript.usage == {}
    assert (
        transcript.meta["session_usage"]["accumulated_input_tokens"]
        == session["accumulated_input_tokens"]
    )


def test_what_goose_hid_after_summarizing_is_kept_and_counted() -> None:
    _, messages = _messages(EXPORT)
    transcript = load(EXPORT)
    hidden = [
        m
        for m in messages
        if m.get("metadata", {}).get("agentVisible") is False
        and not all(c["type"] in SCREEN for c in m["content"])
    ]
    assert transcript.meta["hidden_from_agent"] == len(hidden)
    (compaction,) = recorded_compactions(transcript)
    summary = transcript.messages[compaction.index].content[compaction.block]
    assert summary.text.startswith("Summary: the user asked")  # type: ignore[union-attr]


def test_detected_and_listed(tmp_path: Path) -> None:
    session, messages = _messages(LEGACY)
    assert detect_format(session) == "goose" and detect_format(messages[0]) == "goose"
    assert detect_format(json.loads(EXPORT.read_text())) == "goose"
    (tmp_path / LEGACY.name).write_bytes(LEGACY.read_bytes())
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["format"].tolist() == ["goose"] and frame["problem"].isna().all()


@SETTINGS
@given(st.data(), st.sampled_from([LEGACY, EXPORT]))
def test_a_mutated_session_loads_or_raises_a_typed_error(data: st.DataObject, path: Path) -> None:
    session, messages = _messages(path)
    document: Any = [session, *messages] if path.suffix == ".jsonl" else session
    changed = data.draw(mutated(document))
    loads_or_refuses(
        lambda: load(changed if isinstance(changed, list) else [changed], format="goose")
    )
