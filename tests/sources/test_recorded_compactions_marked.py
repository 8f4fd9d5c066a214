"""Every compaction a recording holds is marked on a request, in both views — a recording
that opens with a reply before any user message too (its compactions before the first request
are marked on the first). Claude Code files are generated line by line: replies, prompts,
compaction boundaries and summaries in any order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.analysis import recorded_compactions, recorded_requests
from ctxlab.exceptions import CtxlabError
from ctxlab.io import load
from ctxlab.sources import ReplaySession
from ctxlab.tokens import ApproximateCounter


def _file(kinds: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for n, kind in enumerate(kinds):
        if kind == "a":
            message = {
                "role": "assistant",
                "id": f"m{n}",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": f"reply {n}"}],
                "usage": {"input_tokens": 100 + n, "output_tokens": 5},
            }
            lines.append({"type": "assistant", "sessionId": "s", "message": message})
        elif kind == "u":
            message = {"role": "user", "content": f"prompt {n}"}
            lines.append({"type": "user", "sessionId": "s", "message": message})
        elif kind == "b":
            lines.append(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "sessionId": "s",
                    "compactMetadata": {"trigger": "auto", "preTokens": 1000 + n},
                }
            )
        else:
            message = {"role": "user", "content": f"This session is being continued: summary {n}"}
            lines.append(
                {"type": "user", "sessionId": "s", "isCompactSummary": True, "message": message}
            )
    return lines


async def _marks(path: Path) -> tuple[int, int, int, int] | None:
    try:
        transcript = load(path)
    except CtxlabError:
        return None
    requests = recorded_requests(transcript)
    if not requests:
        return None
    held = len(recorded_compactions(transcript))
    recorded = sum(len(r.compactions) + len(r.compactions_after) for r in requests)
    views = []
    for view in ("recorded", "replayed"):
        source = ReplaySession(
            transcript, context_window=200_000, counter=ApproximateCounter(), view=view
        )
        manifests = await source.run()
        views.append(sum(t.kind == "recorded_compaction" for m in manifests for t in m.transforms))
    return held, recorded, views[0], views[1]


@pytest.mark.parametrize("kinds", ["abuauabsa", "babsauabsa", "aaubsaua"])
async def test_a_recording_opening_with_a_reply_marks_each_compaction(
    tmp_path: Path, kinds: str
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in _file(kinds)) + "\n")
    marks = await _marks(path)
    assert marks is not None
    held = marks[0]
    assert held == kinds.count("b") and marks == (held, held, held, held)


@settings(max_examples=60, deadline=None)
@given(kinds=st.text(alphabet="aubs", min_size=2, max_size=12))
async def test_every_recorded_compaction_is_marked_once_in_both_views(
    tmp_path_factory: pytest.TempPathFactory, kinds: str
) -> None:
    path = tmp_path_factory.mktemp("cc") / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in _file(kinds)) + "\n")
    marks = await _marks(path)
    if marks is not None:
        held = marks[0]
        assert marks == (held, held, held, held), kinds
