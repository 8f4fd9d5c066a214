"""A recording as recorded, and its estimates reconciled with the bill.

The billed figures the corpus tests compare with are read from the raw Claude Code files here,
by a few lines of JSON parsing that share nothing with ctxlab's importer.
"""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.analysis._calibration import CalibrationPoint, calibrate, fit_points
from ctxlab.analysis._recorded import recorded_compactions, recorded_requests, unrecorded_parts
from ctxlab.io._transcript import Transcript, corpus_dir
from ctxlab.messages import TextBlock

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
CLAUDE_CODE = sorted((corpus_dir() / "raw" / "claude_code").glob("*.jsonl"))
requires_claude_code = pytest.mark.skipif(
    not CLAUDE_CODE,
    reason="no Claude Code sessions: set CTXLAB_CORPUS to the folder holding raw/claude_code",
)


def _points(fixed: dict[int, float], ratio: float) -> list[CalibrationPoint]:
    sizes = [40, 900, 2_500, 6_000, 9_000, 15_000, 22_000, 31_000, 45_000, 60_000]
    points = []
    for segment, part in fixed.items():
        for size in sizes:
            billed = round(part + ratio * size)
            points.append(CalibrationPoint(len(points), size, billed, segment, "m"))
    return points


def test_a_bill_that_is_fixed_plus_ratio_is_fitted_exactly() -> None:
    calibration = fit_points(_points({0: 26_000, 1: 33_000}, 1.28))
    fit = calibration.fit()
    assert fit is not None
    assert fit.ratio == pytest.approx(1.28, abs=1e-3)
    assert fit.fixed[0] == pytest.approx(26_000, abs=2)
    assert fit.fixed[1] == pytest.approx(33_000, abs=2)
    assert calibration.median_error == pytest.approx(0.0, abs=1e-4)
    # The raw estimate is far off: what calibration is for.
    assert calibration.raw_median_error is not None and calibration.raw_median_error > 0.2
    assert (calibration.frame()["flag"] == "").all()


def test_a_bill_paired_with_the_wrong_requests_is_not_reconciled() -> None:
    # The control: the same bills shuffled among the requests must not fit.
    points = _points({0: 26_000}, 1.28)
    bills = [p.billed for p in points]
    random.Random(7).shuffle(bills)
    shuffled = [
        CalibrationPoint(p.number, p.estimate, b, p.segment, p.model)
        for p, b in zip(points, bills, strict=True)
    ]
    calibration = fit_points(shuffled)
    assert calibration.median_error is not None and calibration.median_error > 0.15
    flagged = calibration.frame().query("flag != ''")
    assert len(flagged) >= 3 and set(flagged["flag"]) == {"not explained by the recording"}


def test_models_are_fitted_apart() -> None:
    points = _points({0: 26_000}, 1.28) + [
        CalibrationPoint(100 + p.number, p.estimate, round(29_000 + 1.45 * p.estimate), 0, "h")
        for p in _points({0: 0}, 1.0)
    ]
    calibration = fit_points(points)
    assert {f.model for f in calibration.fits} == {"m", "h"}
    fit_h = calibration.fit("h")
    assert fit_h is not None
    assert fit_h.ratio == pytest.approx(1.45, abs=1e-3)
    assert fit_h.fixed[0] == pytest.approx(29_000, abs=2)
    assert "1.450 billed tokens per estimated token" in calibration.describe()


def test_the_fixture_restarts_from_its_summary_after_the_recorded_compaction() -> None:
    transcript = load(FIXTURE)
    (compaction,) = recorded_compactions(transcript)
    assert (compaction.trigger, compaction.pre_tokens) == ("manual", 20_900)
    requests = recorded_requests(transcript)
    assert [r.number for r in requests] == [0, 1, 2, 3, 4]
    assert [r.segment for r in requests] == [0, 0, 0, 1, 1]
    after = requests[3]
    assert after.compaction == compaction and requests[4].compaction is None
    # The request after it opens with the summary alone (not the results before it).
    (opening,) = after.messages
    (block,) = opening.content
    assert isinstance(block, TextBlock)
    assert block.text.startswith("This session is being continued")
    billed = [r.usage.total_input_tokens for r in requests if r.usage]
    assert billed == [14_230, 19_950, 20_056, 14_358, 14_414]
    assert unrecorded_parts(transcript) == ["System prompt", "tool schemas"]


def test_a_transcript_with_system_and_tools_has_nothing_unrecorded() -> None:
    transcript = load(FIXTURE)
    from ctxlab import ToolSchema

    whole = Transcript(
        transcript.name,
        transcript.meta,
        "You are a careful engineer.",
        transcript.messages,
        tools=(ToolSchema("Bash", "run a command", {"type": "object"}),),
        usage=transcript.usage,
    )
    assert unrecorded_parts(whole) == []


# -- real Claude Code sessions ------------------------------------------------------------------


def _raw_bills(path: Path) -> list[int]:
    """Input + cache read + cache write of each main-chain API response, in order, by message id
    — straight from the file."""
    seen: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        usage = message.get("usage") or {}
        key = message.get("id")
        if key in seen or not usage:
            continue
        seen[key] = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
    return list(seen.values())


def _raw_boundaries(path: Path) -> int:
    return sum(
        1
        for line in path.read_text(encoding="utf-8").splitlines()
        if '"compact_boundary"' in line and json.loads(line).get("subtype") == "compact_boundary"
    )


@requires_claude_code
@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: p.name[:8])
def test_real_sessions_reconcile_within_five_percent(path: Path) -> None:
    transcript = load(path)
    assert len(recorded_compactions(transcript)) == _raw_boundaries(path) >= 1
    calibration = calibrate(transcript)
    frame = calibration.frame()
    # Every billed response is there, paired in order.
    assert sorted(frame["billed"]) == sorted(_raw_bills(path))
    assert calibration.median_error is not None and calibration.median_error <= 0.05
    for segment, errors in frame.groupby("segment")["error"]:
        assert statistics.median(errors) <= 0.05, f"segment {segment}"
    assert calibration.raw_median_error is not None and calibration.raw_median_error > 0.2
    # System + tools of Claude Code: some 20–35k tokens, read from the first requests.
    main = calibration.fit()
    assert main is not None and 15_000 < main.fixed[0] < 40_000
    assert 1.05 < main.ratio < 1.8


@requires_claude_code
def test_real_sessions_without_their_compactions_do_not_reconcile() -> None:
    # The control: the same session read as if it never compacted is not reconciled as well.
    path = CLAUDE_CODE[0]
    transcript = load(path)
    blind = Transcript(
        transcript.name,
        {**transcript.meta, "compactions": []},
        transcript.system,
        transcript.messages,
        usage=transcript.usage,
    )
    honest_calibration, blind_calibration = calibrate(transcript), calibrate(blind)
    honest, wrong = honest_calibration.frame(), blind_calibration.frame()
    after = honest["segment"] == 1
    assert after.any()
    first = int(honest[after].index[0])
    # The bill says what the file no longer does: it breaks from the fit right there (the
    # honest reading needs no break), the first two requests after it cannot be forecast
    # (more than 3 times their bill: flagged where shown) ...
    assert honest_calibration.breaks == ()
    assert blind_calibration.breaks == (int(honest["step"][first]),)
    assert (wrong["forecast_error"][first : first + 2] > 3).all()
    # ... and, the fixed part measured again from the break, the requests after it are still
    # described worse than with the compaction (measured: 1.7 % against 0.45 %).
    assert wrong[after.to_numpy()]["error"].median() > 3 * honest[after]["error"].median()


async def test_whatif_figures_on_a_billed_session_come_in_calibrated_tokens_too() -> None:
    from ctxlab import ContextConfig, WhatIf

    what = WhatIf(load(FIXTURE), {"default": ContextConfig()}, context_window=200_000)
    await what.run()
    table = what.table()
    fit = what.calibration.fit() if what.calibration else None
    assert fit is not None
    run = what.runs["default"]
    # Each request carries the unrecorded part, sized from the bill: the fit's fixed part.
    assert {m.totals["unrecorded"] for m in run.manifests} == {round(fit.fixed[0])}
    expected = sum(
        round(fit.fixed[0] + fit.ratio * (m.estimated_input_tokens - m.totals["unrecorded"]))
        for m in run.manifests
    )
    assert table.loc["default", "tokens_sent_calibrated"] == expected
    assert "provider's tokens" in table.attrs["calibration"]
    # A recording without usage has nothing to calibrate with: no such column.
    bare = Transcript("bare", {}, "", load(FIXTURE).messages)
    plain_what = WhatIf(bare, {"default": ContextConfig()}, context_window=200_000)
    await plain_what.run()
    plain = plain_what.table()
    assert "tokens_sent_calibrated" not in plain and "calibration" not in plain.attrs


def _line(kind: str, content: object, **extra: object) -> str:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("id"), model="claude-sonnet-4-6", usage=extra.pop("usage"))
    return json.dumps({"type": kind, "sessionId": "s", "message": message, **extra})


def _usage(n: int) -> dict[str, int]:
    return {"input_tokens": 3, "cache_read_input_tokens": n, "cache_creation_input_tokens": 0}


def test_a_microcompact_clears_the_results_it_names_in_the_requests_after_it(
    tmp_path: Path,
) -> None:
    call = {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "big.py"}}
    lines = [
        _line("user", "Read big.py and fix it."),
        _line("assistant", [call], id="m1", usage=_usage(20_000)),
        _line(
            "user", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "x = 1\n" * 3000}]
        ),
        _line("assistant", [{"type": "text", "text": "Read it."}], id="m2", usage=_usage(29_000)),
        _line("user", "Now fix the bug."),
        json.dumps(
            {
                "type": "system",
                "subtype": "microcompact_boundary",
                "sessionId": "s",
                "microcompactMetadata": {
                    "trigger": "auto",
                    "preTokens": 29_100,
                    "tokensSaved": 8_900,
                    "compactedToolIds": ["toolu_a"],
                },
            }
        ),
        _line("assistant", [{"type": "text", "text": "Fixed."}], id="m3", usage=_usage(20_300)),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path)
    (compaction,) = recorded_compactions(transcript)
    assert (compaction.kind, compaction.tool_ids, compaction.tokens_saved) == (
        "microcompact",
        ("toolu_a",),
        8_900,
    )
    _, second, third = recorded_requests(transcript)
    assert third.compaction == compaction and third.segment == 1 and second.segment == 0
    # Not a restart: the whole conversation is still sent, the cleared result as a placeholder.
    assert third.start == 0 and len(third.messages) == 5
    result = third.messages[2].tool_results[0]  # type: ignore[union-attr]
    assert result.text == "[Old tool result content cleared]"
    assert second.messages[2].tool_results[0].text.startswith("x = 1")  # type: ignore[union-attr]


def test_a_summary_without_its_boundary_is_a_recorded_compaction(tmp_path: Path) -> None:
    lines = [
        _line(
            "user",
            "This session is being continued from a previous conversation. Summary: fix big.py.",
            isCompactSummary=True,
        ),
        _line("assistant", [{"type": "text", "text": "On it."}], id="m1", usage=_usage(24_000)),
        _line("user", "Go on."),
        _line("assistant", [{"type": "text", "text": "Done."}], id="m2", usage=_usage(24_100)),
    ]
    path = tmp_path / "continued.jsonl"
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path)
    (compaction,) = recorded_compactions(transcript)
    assert (compaction.kind, compaction.trigger, compaction.index) == ("compact", "unknown", 0)
    first, second = recorded_requests(transcript)
    assert first.compaction == compaction and second.compaction is None


def test_a_compaction_the_session_ended_on_is_marked_after_the_last_request(
    tmp_path: Path,
) -> None:
    lines = [
        _line("user", "Fix big.py."),
        _line("assistant", [{"type": "text", "text": "Fixed."}], id="m1", usage=_usage(24_000)),
        _line("user", "<command-name>/compact</command-name>"),
        json.dumps(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "sessionId": "s",
                "compactMetadata": {"trigger": "manual", "preTokens": 24_100},
            }
        ),
        _line("user", "This session is being continued. Summary: fixed.", isCompactSummary=True),
    ]
    path = tmp_path / "ended.jsonl"
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path)
    (only,) = recorded_requests(transcript)
    assert only.compactions == () and len(only.compactions_after) == 1
    from ctxlab.analysis._recorded import recorded_manifest
    from ctxlab.tokens import TiktokenCounter, TokenCache

    manifest = recorded_manifest(
        only, TokenCache(TiktokenCounter()), context_window=200_000, previous=None
    )
    (mark,) = manifest.transforms
    assert (mark.kind, mark.target, mark.detail, mark.tokens_before) == (
        "recorded_compaction",
        "after",
        "manual",
        24_100,
    )


def test_a_claude_code_file_may_open_with_a_newer_kind_of_line(tmp_path: Path) -> None:
    queue = {"type": "queue-operation", "operation": "enqueue", "sessionId": "s", "content": "hi"}
    lines = [
        json.dumps(queue),
        _line("user", "Fix big.py."),
        _line("assistant", [{"type": "text", "text": "Fixed."}], id="m1", usage=_usage(24_000)),
    ]
    path = tmp_path / "queued.jsonl"
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path)
    assert transcript.meta["source"] == "claude_code"
    assert [r.usage.total_input_tokens for r in recorded_requests(transcript) if r.usage] == [
        24_003
    ]
