"""`ReplaySession` on its own (no Lab): the events of both views, in order, with their usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.agent import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.exceptions import UsageError
from ctxlab.sources import ReplaySession

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_each_request_comes_with_its_request_and_then_its_usage(view: str) -> None:
    session = ReplaySession(load(FIXTURE), context_window=200_000, view=view)  # type: ignore[arg-type]
    events: list[object] = []
    session.subscribe(events.append)
    done: list[tuple[int, int]] = []
    session.on_progress = lambda n, total: done.append((n, total))
    manifests = await session.run()
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    answers = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert len(builds) == len(manifests) == session.request_count == 5
    assert all(b.request is not None for b in builds)  # what the panels show
    assert [a.request_id for a in answers] == [m.request_id for m in manifests]
    assert [a.usage.total_input_tokens for a in answers if a.usage] == [
        14_230,
        19_950,
        20_056,
        14_358,
        14_414,
    ]
    assert done[-1] == (5, 5)
    assert not any(isinstance(e, CompactionEvent) for e in events)  # ctxlab did not compact
    marked = [m for m in manifests if any(t.kind == "recorded_compaction" for t in m.transforms)]
    assert [manifests.index(m) for m in marked] == [3]


def test_an_unknown_view_is_refused() -> None:
    with pytest.raises(UsageError, match="view must be one of"):
        ReplaySession(load(FIXTURE), context_window=8_000, view="both")  # type: ignore[arg-type]
