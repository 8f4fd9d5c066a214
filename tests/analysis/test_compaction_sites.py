"""Where compaction really fired (issue 56 item 3): every compaction of the corpus's Claude Code
sessions, its boundary's bill recomputed here from the raw JSON Lines — the last main-chain
assistant line before the ``compact_boundary``, its ``usage`` summed by hand — against Claude
Code 2.1's documented auto-compact threshold (200,000 − 20,000 − 13,000 = 167,000: the window,
the summary's output reservation, the buffer; ``services/compact/autoCompact.ts``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.analysis._compaction_sites import (
    compaction_sites,
    documented_threshold,
    sites_frame,
)
from ctxlab.io._transcript import corpus_dir

CLAUDE_CODE_2_1 = 200_000 - 20_000 - 13_000


def compacting_sessions() -> list[Path]:
    raw = corpus_dir() / "raw" / "claude_code"
    if not raw.is_dir():
        return []
    return [p for p in sorted(raw.glob("*.jsonl")) if "compact_boundary" in p.read_text()]


def raw_boundaries(path: Path) -> list[dict[str, object]]:
    """Each compact_boundary of the file, with the bill of the last assistant line before it
    on the main chain, read from the JSON itself."""
    out: list[dict[str, object]] = []
    usage: dict[str, int] | None = None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            usage = record["message"].get("usage") or usage
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            assert usage is not None
            billed = (
                usage["input_tokens"]
                + usage.get("cache_read_input_tokens", 0)
                + usage.get("cache_creation_input_tokens", 0)
            )
            out.append(
                {
                    "version": record["version"],
                    "trigger": record["compactMetadata"]["trigger"],
                    "pre_tokens": record["compactMetadata"]["preTokens"],
                    "billed_input": billed,
                    "billed_context": billed + usage["output_tokens"],
                }
            )
    return out


@pytest.mark.skipif(not compacting_sessions(), reason="no corpus: set CTXLAB_CORPUS")
@pytest.mark.parametrize("path", compacting_sessions(), ids=lambda p: p.stem[:8])
def test_each_compaction_is_located_against_its_versions_threshold(path: Path) -> None:
    expected = raw_boundaries(path)
    sites = compaction_sites(load(path))
    assert len(sites) == len(expected) >= 1
    for site, raw in zip(sites, expected, strict=True):
        assert (site.version, site.trigger, site.pre_tokens) == (
            raw["version"],
            raw["trigger"],
            raw["pre_tokens"],
        )
        assert site.billed_input == raw["billed_input"]
        assert site.billed_context == raw["billed_context"]
        assert site.threshold == CLAUDE_CODE_2_1
        assert site.difference == raw["billed_context"] - CLAUDE_CODE_2_1
        assert "autoCompact.ts" in site.source
        # An automatic compaction of Claude Code 2.1 fires within 2 % of its threshold; a
        # manual one wherever the user asked.
        if site.trigger == "auto":
            assert abs(site.difference) < 0.02 * CLAUDE_CODE_2_1
            assert not site.far
    frame = sites_frame(sites)
    assert list(frame["billed_context"]) == [r["billed_context"] for r in expected]


@pytest.mark.skipif(not compacting_sessions(), reason="no corpus: set CTXLAB_CORPUS")
def test_a_manual_compaction_far_below_the_threshold_is_far_but_not_a_miss() -> None:
    manual = [
        s for p in compacting_sessions() for s in compaction_sites(load(p)) if s.trigger == "manual"
    ]
    assert manual, "the corpus holds a /compact"
    for site in manual:
        assert site.difference is not None and site.difference < -0.1 * CLAUDE_CODE_2_1
        assert not site.far  # far is read against the auto-compact threshold only


@pytest.mark.skipif(not compacting_sessions(), reason="no corpus: set CTXLAB_CORPUS")
def test_an_auto_compaction_moved_far_from_its_threshold_is_marked() -> None:
    # The control: the same session, its bill before the boundary cut to 74,000 tokens (the
    # report of claude-code #61334), is marked far; the untouched one is not.
    path = next(p for p in compacting_sessions() if raw_boundaries(p)[0]["trigger"] == "auto")
    transcript = load(path)
    site = compaction_sites(transcript)[0]
    assert not site.far
    moved = dataclasses.replace(site, billed_context=74_000, difference=74_000 - site.threshold)
    assert moved.far


@pytest.mark.parametrize(
    ("tool", "version", "window", "expected"),
    [
        ("claude_code", "2.1.39", 200_000, 167_000),
        ("claude_code", "2.1.88", 1_000_000, 967_000),
        ("claude_code", "2.1.21", 200_000, 167_000),  # the first with the 20,000 room
        ("claude_code", "2.1.20", 200_000, 155_000),  # the whole 32,000 reserved before
        ("claude_code", "2.0.14", 200_000, 155_000),
        ("claude_code", "1.0.30", 200_000, None),  # no documented row: unknown, not guessed
        ("claude_code", None, 200_000, None),
        ("claude_code", "garbage", 200_000, None),
        ("codex", "0.55.0", 272_000, 244_800),
        ("gemini_cli", "0.21.0", 1_048_576, 524_288),
        ("aider", "0.86.0", 200_000, None),
        ("claude_code", "2.1.39", None, None),  # the window unknown
    ],
)
def test_the_documented_threshold_by_tool_and_version(
    tool: str, version: str | None, window: int | None, expected: int | None
) -> None:
    found = documented_threshold(tool, version, window)
    assert (found[0] if found else None) == expected


@pytest.mark.skipif(not compacting_sessions(), reason="no corpus: set CTXLAB_CORPUS")
def test_sessions_gives_the_table_by_tool_version(tmp_path: Path) -> None:
    from ctxlab import sessions

    chosen = {raw_boundaries(p)[0]["trigger"]: p for p in compacting_sessions()}
    for path in chosen.values():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    listed = sessions(tmp_path)
    table = listed[listed["episode"] == 0].set_index("name")  # the episodes apart
    assert len(table) == len(chosen) == 2
    for path in chosen.values():
        row = table.loc[load(path).name]
        expected = raw_boundaries(path)
        assert row["compaction_version"] == expected[0]["version"]
        assert row["compaction_threshold"] == CLAUDE_CODE_2_1
        assert row["compactions_fired_at"] == tuple(r["billed_context"] for r in expected)
        assert row["compactions_vs_threshold"] == tuple(
            r["billed_context"] - CLAUDE_CODE_2_1 for r in expected
        )
    by_version = table.explode("compactions_vs_threshold").groupby("compaction_version")
    assert list(by_version.groups) == ["2.1.39"]


@pytest.mark.skipif(not compacting_sessions(), reason="no corpus: set CTXLAB_CORPUS")
@pytest.mark.parametrize(
    "meta",
    [
        {"reply_models": [1, 2]},  # models not by reply
        {"reply_models": {"0": 5}},  # a model that is no name
        {"compactions": [{"replies_before": "x", "version": 3}, 7]},
        {"compactions": [{"replies_before": 10**9}]},
    ],
)
def test_odd_meta_costs_the_figure_never_the_row(meta: dict[str, object]) -> None:
    from ctxlab.io._compaction_thresholds import compaction_columns

    path = next(p for p in compacting_sessions() if raw_boundaries(p)[0]["trigger"] == "auto")
    transcript = load(path)
    odd = dataclasses.replace(transcript, meta={**transcript.meta, **meta})
    columns = compaction_columns(odd)
    assert columns["compaction_threshold"] is None  # no window, or no version: no threshold
    assert all(d is None for d in columns["compactions_vs_threshold"])
