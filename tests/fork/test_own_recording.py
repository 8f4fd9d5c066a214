"""A fork of ctxlab's own recording, answered by the recording (`model="recorded"`), replays
what its agent sent: the saved transcript keeps each tool result whole and, beside it, the
form its requests sent it in (cut, offloaded: `SENT_RESULTS`), so under the recording's own
config the branch replays to the recording's end — before, it parted at the first request
holding a cut result. Under a config that cuts otherwise, it parts there (the control)."""

from __future__ import annotations

from pathlib import Path

import ctxlab
from ctxlab.agent import SENT_RESULTS
from ctxlab.fork import fork, run_forward
from ctxlab.messages import AssistantMessage, ToolResultBlock
from ctxlab.pipeline import TRUNCATION_MARKER
from tests.fork.helpers import demo_session


async def _saved(tmp_path: Path) -> tuple[ctxlab.Transcript, int, object]:
    session = await demo_session(tmp_path / "origin")
    path = session.agent.transcript().save(tmp_path / "recording.jsonl")
    requests = len(session.sent)
    return ctxlab.load(path), requests, session.agent.context_config


async def test_a_fork_of_ctxlabs_own_recording_replays_what_was_sent(tmp_path: Path) -> None:
    recording, requests, config = await _saved(tmp_path)
    # The recording's requests cut results (the demo's 1,500-token cap): what makes it a test.
    sent = recording.meta[SENT_RESULTS]
    whole = {
        b.tool_use_id: b.text
        for m in recording.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    forms = [ToolResultBlock(**b) for b in sent.values()]
    assert forms and all(len(f.text) < len(whole[f.tool_use_id]) for f in forms)
    assert any(TRUNCATION_MARKER in f.text for f in forms)
    assert str(tmp_path) not in str(sent)  # the offload paths are the workspace's own
    replies = sum(isinstance(m, AssistantMessage) for m in recording.messages)
    assert replies == requests
    for at in (0, 2):
        branch = await fork(
            recording, at=at, config=config, model="recorded", root=tmp_path / f"b{at}"
        )
        (run,) = (await run_forward(branch, check=lambda run: True, max_steps=50)).runs
        assert len(run.requests) == requests - at
        assert run.notes == [
            f"unknown: replayed the recording to its end (request {requests - 1}) — no call ran here"
        ]


async def test_under_a_config_cutting_otherwise_the_fork_parts_at_the_first_cut(
    tmp_path: Path,
) -> None:
    recording, _, config = await _saved(tmp_path)
    cut = config.merge(tool_result_limit=300)  # type: ignore[attr-defined]
    branch = await fork(recording, at=0, config=cut, model="recorded", root=tmp_path / "b")
    (run,) = (await run_forward(branch, check=lambda run: True, max_steps=50)).runs
    # Request 1 holds the first result, cut at 300 tokens where the recording sent 1,500.
    assert run.notes == ["unknown after request 1 — the contexts part here"]


async def test_the_recording_as_recorded_holds_the_results_as_its_requests_sent_them(
    tmp_path: Path,
) -> None:
    # The "as recorded" view (`recorded_requests`, what calibration compares with the bill) of
    # ctxlab's own recording: each tool result as the agent's requests sent it, read from the
    # requests themselves — not the whole result its messages keep.
    session = await demo_session(tmp_path / "origin")
    path = session.agent.transcript().save(tmp_path / "recording.jsonl")
    recorded = ctxlab.recorded_requests(ctxlab.load(path))
    assert len(recorded) == len(session.sent)

    def results(messages: object) -> dict[str, str]:
        return {
            b.tool_use_id: b.text
            for m in messages  # type: ignore[attr-defined]
            for b in m.content
            if isinstance(b, ToolResultBlock)
        }

    folder = f"{session.agent.workspace}/"
    cut = 0
    for mine, sent in zip(recorded, session.sent, strict=True):
        theirs = {k: v.replace(folder, "") for k, v in results(sent.messages).items()}
        assert results(mine.messages) == theirs
        cut += sum(TRUNCATION_MARKER in t for t in theirs.values())
    assert cut > 0  # the control: some results went cut, so whole ones would differ
