"""The harnesses' own policies as presets (`ctxlab/config/_harness_presets.py`): each trigger is
where its source puts it, for the windows the source covers, and a corpus session replayed under
each compacts first exactly at the request that first passes that line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ctxlab import PRESETS, ApproximateCounter, ContextConfig, replay
from ctxlab.config._harness_presets import (
    HARNESS_PRESETS,
    claude_code_trigger,
    codex_trigger,
    gemini_cli_trigger,
)
from ctxlab.io._transcript import load_transcript
from ctxlab.manifest._thresholds import Thresholds
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import replayed

# The source's line for a window, written from the source's own formula.
SOURCE_LINES: dict[str, Callable[[int], int]] = {
    "claude_code": lambda w: w - min(64_000, 20_000) - 13_000,
    "claude_code_2.0": lambda w: w - 32_000 - 13_000,
    "codex": lambda w: (w * 9) // 10,
    "gemini_cli": lambda w: round(0.5 * w),
    "gemini_cli_0.7": lambda w: round(0.7 * w),
}


def test_every_harness_preset_is_a_preset_with_its_source() -> None:
    assert set(HARNESS_PRESETS) == set(SOURCE_LINES)
    for name, make in HARNESS_PRESETS.items():
        assert PRESETS[name] is make
        assert ContextConfig.preset(name) == make()
        doc = make.__doc__ or ""
        assert "github.com/" in doc or "CHANGELOG" in doc, name


@pytest.mark.parametrize("window", [64_000, 128_000, 200_000, 272_000, 330_000])
@pytest.mark.parametrize("name", sorted(SOURCE_LINES))
def test_each_trigger_is_where_its_source_puts_it(name: str, window: int) -> None:
    lines = Thresholds.compute(ContextConfig.preset(name), window)
    assert lines.trigger_tokens == SOURCE_LINES[name](window)


def test_the_documented_figures() -> None:
    """The numbers the sources state: 167,000 of Claude Code's 200,000 (155,000 before 2.1.21),
    244,800 of gpt-5's 272,000 in Codex, half and 0.7 of Gemini's 1,048,576."""
    assert claude_code_trigger(200_000) == 167_000
    assert claude_code_trigger(200_000, before_2_1_21=True) == 155_000
    assert codex_trigger(272_000) == 244_800
    assert gemini_cli_trigger(1_048_576) == 524_288
    figures = {
        ("claude_code", 200_000): 167_000,
        ("claude_code_2.0", 200_000): 155_000,
        ("codex", 272_000): 244_800,
        ("gemini_cli", 1_048_576): 524_288,
        ("gemini_cli_0.7", 1_048_576): 734_003,
    }
    for (name, window), line in figures.items():
        assert Thresholds.compute(ContextConfig.preset(name), window).trigger_tokens == line
    # Claude Code's microcompact: the warning line 20,000 below auto-compact, 5 results kept.
    edits = ContextConfig.preset("claude_code").provider_edits
    assert edits is not None and edits.clear_tool_uses is not None
    assert (edits.clear_tool_uses.trigger_input_tokens, edits.clear_tool_uses.keep) == (147_000, 5)
    assert edits.clear_tool_uses.placeholder == "[Old tool result content cleared]"
    # Gemini keeps the latest 30 % of the history it compresses: 0.15 of the window at 0.5.
    assert ContextConfig.preset("gemini_cli").reserve_ratio == 0.15
    assert ContextConfig.preset("codex").compaction.pin_user_messages is True


WINDOW = 100_000


async def _first_compaction(path: Path, config: ContextConfig) -> tuple[int, int]:
    """The request number of the first compaction, and the largest request before it."""
    largest = 0
    run = replayed(load_transcript(path), context_window=WINDOW, config=config, grade=False)
    async for step in run:
        if step.compaction is not None:
            return step.number, largest
        largest = max(largest, step.manifest.estimated_input_tokens)
    pytest.fail(f"{path.name} never compacted under {config}")


async def _first_request_over(path: Path, line: int) -> int:
    """With nothing compacted, the number of the first request over ``line`` tokens."""
    transcript = load_transcript(path)
    never = ContextConfig(compaction={"enabled": False, "prune": None})  # type: ignore[arg-type]
    async for step in replay(
        transcript.messages,
        context_window=10 * WINDOW,
        counter=ApproximateCounter(),
        config=never,
        system=transcript.system,
        grade=False,
    ):
        if step.manifest.estimated_input_tokens > line:
            return step.number
    pytest.fail(f"{path.name} never passes {line:,} tokens")


@requires_corpus
@pytest.mark.parametrize("name", sorted(SOURCE_LINES))
async def test_a_corpus_session_compacts_first_where_the_source_says(name: str) -> None:
    path = next(p for p in corpus_files() if p.name.startswith("claude_code__4d5611e5-"))
    line = SOURCE_LINES[name](WINDOW)
    number, largest = await _first_compaction(path, ContextConfig.preset(name))
    assert largest <= line
    assert number == await _first_request_over(path, line)
