"""Every transcript of the corpus replays through the pipeline with validation passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import TiktokenCounter
from ctxlab.io._transcript import load_transcript
from ctxlab.messages import find_tool_pair_problems
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import replayed


@requires_corpus
@pytest.mark.parametrize("window", [200_000, 32_000])
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem[:50])
async def test_transcript_replays_with_validation_passed(
    path: Path, window: int, tiktoken_counter: TiktokenCounter
) -> None:
    transcript = load_transcript(path)
    steps = 0
    async for step in replayed(transcript, context_window=window, counter=tiktoken_counter):
        steps += 1
        manifest = step.manifest
        assert manifest.validation == "passed"
        assert manifest.estimated_input_tokens <= manifest.input_limit
        assert find_tool_pair_problems(step.state.conversation) == []
    assert steps == sum(1 for m in transcript.messages if m.role == "assistant")


@requires_corpus
async def test_small_window_forces_compaction_on_long_sessions(
    tiktoken_counter: TiktokenCounter,
) -> None:
    path = max(corpus_files(), key=lambda p: p.stat().st_size)
    transcript = load_transcript(path)
    run = replayed(transcript, context_window=32_000, counter=tiktoken_counter)
    compactions = [step.compaction async for step in run if step.compaction is not None]
    assert compactions
    assert all(c.kind == "summary" and c.tokens_after < c.tokens_before for c in compactions)


def test_corpus_loader_rejects_a_file_without_meta(tmp_path: Path) -> None:
    from ctxlab.exceptions import MessageFormatError

    bad = tmp_path / "x.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n')
    with pytest.raises(MessageFormatError, match="meta"):
        load_transcript(bad)
    bad.write_text('{"type": "meta"}\n{not json\n')
    with pytest.raises(MessageFormatError, match="line 2: not JSON"):
        load_transcript(bad)


@requires_corpus
async def test_compare_configs_side_by_side_on_a_real_transcript() -> None:
    from ctxlab import ApproximateCounter, ContextConfig, compare_configs

    transcript = load_transcript(max(corpus_files(), key=lambda p: p.stat().st_size))
    frame = await compare_configs(
        transcript.messages,
        {
            "default": ContextConfig(),
            "eager": ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1, tool_result_limit=2000),
        },
        context_window=32_000,
        counter=ApproximateCounter(),
        system=transcript.system,
    )
    by = {name: group for name, group in frame.groupby("config")}
    assert set(by) == {"default", "eager"}
    assert len(by["default"]) == len(by["eager"]) > 10
    assert (frame["validation"] == "passed").all()
    assert by["eager"]["trigger_tokens"].iloc[0] < by["default"]["trigger_tokens"].iloc[0]
    assert by["eager"]["truncations"].sum() >= by["default"]["truncations"].sum()
    assert (by["eager"]["compaction"] != "").sum() >= (by["default"]["compaction"] != "").sum()
    assert (frame["total"] <= frame["input_limit"]).all()
