"""The Lab marks a recording's own compaction that fired far from the threshold its tool
documents for the version that wrote it: the ◆ is crossed, and its hover says where it fired —
the bill before it, recomputed here from the recording's usage — against that threshold.

The fixture's /compact was written by Claude Code 2.0.14, whose documented line at a 200,000
window is 200,000 − 32,000 − 13,000 = 155,000 (its CHANGELOG's 2.1.21 fix: the whole output
default was reserved before). A manual /compact is not governed by the threshold (the control)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxlab import Transcript, load
from ctxlab.analysis._recorded import recorded_requests
from ctxlab.messages import AssistantMessage

pytest.importorskip("ipywidgets")

from ctxlab.widgets import Lab

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
DOCUMENTED = 200_000 - 32_000 - 13_000


def _with_trigger(trigger: str) -> Transcript:
    transcript = load(FIXTURE)
    records = [{**r, "trigger": trigger} for r in transcript.meta["compactions"]]
    return dataclasses.replace(transcript, meta={**transcript.meta, "compactions": records})


def _billed_before(transcript: Transcript) -> int:
    # The last reply before the compaction, as billed: input, cache reads and writes, output.
    (record,) = transcript.meta["compactions"]
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    usage = transcript.usage[replies[record["replies_before"] - 1]]
    return (
        usage.input_tokens
        + usage.cache_read_input_tokens
        + usage.cache_creation_input_tokens
        + usage.output_tokens
    )


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_an_automatic_compaction_far_from_its_threshold_is_crossed(view: str) -> None:
    transcript = _with_trigger("auto")
    billed = _billed_before(transcript)
    lab = await Lab.open(transcript, context_window=200_000, view=view)
    trace = lab.budget.trace("recorded compaction")
    assert list(trace["marker"]["symbol"]) == ["diamond-x"]
    (text,) = trace["text"]
    assert (
        f"<br>fired at {billed:,} billed tokens<br>claude_code 2.0.14 documents {DOCUMENTED:,} "
        f"({billed - DOCUMENTED:+,}): far from its documented threshold"
    ) in text  # a line a clause: a hover box is narrow


async def test_a_manual_compaction_is_located_but_not_crossed() -> None:
    transcript = _with_trigger("manual")
    billed = _billed_before(transcript)
    lab = await Lab.open(transcript, context_window=200_000, view="recorded")
    trace = lab.budget.trace("recorded compaction")
    assert trace["marker"]["symbol"] == "diamond"
    (text,) = trace["text"]
    assert f"documents {DOCUMENTED:,} ({billed - DOCUMENTED:+,})" in text
    assert "far from" not in text


async def test_a_recording_that_compacts_is_read_once_as_recorded_when_the_lab_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The recorded view and the sites its markers say read one pass over the requests (the
    # sites made their own, once for each new log: three passes in all). Calibration, made
    # when the session is created, is not counted here.
    import ctxlab.analysis._compaction_sites as sites_module
    import ctxlab.sources._replay as replay_module

    transcript = _with_trigger("auto")
    passes: list[Transcript] = []

    def counted(t: Transcript) -> object:
        passes.append(t)
        return recorded_requests(t)

    monkeypatch.setattr(replay_module, "recorded_requests", counted)
    monkeypatch.setattr(sites_module, "recorded_requests", counted)
    lab = await Lab.open(transcript, context_window=200_000)
    assert len(passes) == 1
    # The markers are those `compaction_sites` finds by its own pass.
    (site,) = sites_module.compaction_sites(transcript)
    assert lab.log.sites == [(site.sentence, site.far)]
    assert site.far and site.billed_context == _billed_before(transcript)
