"""Estimates against the bill on every real Claude Code session of the corpus.

    python benchmarks/calibration_bench.py

For each session (``$CTXLAB_CORPUS/raw/claude_code/*.jsonl``), as recorded: requests with usage,
recorded compactions, the fitted ratio and fixed part, and the median per-request
|estimate − billed| ÷ billed —

- ``raw``: ctxlab's cl100k estimate as is;
- ``calibrated``: fitted on the whole session (what the Lab shows), before and after the
  session's own compactions;
- ``held out``: fitted on the first half of each segment, measured on the second half only (the
  honest figure for a calibration carried to requests it has not seen);
- controls that must score worse: the same bills shuffled among the requests, and the session
  read as if it never compacted (``no-cmp``: its error after the compaction). The bill says
  what the file no longer does: read without its compaction, a session's bill *breaks* from
  the fit there (``ctxlab.analysis._calibration_breaks``), the fixed part is measured again
  from the break, and the error after it can be small — ``brk`` gives the breaks found in the
  session as it is and as read without its compaction (the control: more).

The billed figures are read from the raw files here, by code that shares nothing with the
importer, and checked against the importer's.
"""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
import sys
from pathlib import Path

from ctxlab import calibrate, load
from ctxlab.analysis._calibration import CalibrationPoint, fit_points
from ctxlab.io._transcript import Transcript, corpus_dir


def raw_bills(path: Path) -> list[int]:
    seen: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        usage = message.get("usage") or {}
        if message.get("id") in seen or not usage:
            continue
        seen[message.get("id")] = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
    return list(seen.values())


def held_out(points: list[CalibrationPoint]) -> float:
    """Fit on the first half of each segment, measure on the second half."""
    by_segment: dict[tuple[object, int], list[CalibrationPoint]] = {}
    for p in points:
        by_segment.setdefault((p.model, p.segment), []).append(p)
    train = [p for g in by_segment.values() for p in g[: max(len(g) // 2, 1)]]
    test = [p for g in by_segment.values() for p in g[max(len(g) // 2, 1) :]]
    fitted = fit_points(train)
    errors = [
        abs(fitted.calibrated(p.estimate, p.segment, p.model) - p.billed) / p.billed  # type: ignore[operator]
        for p in test
    ]
    return statistics.median(errors) if errors else float("nan")


def main() -> int:
    files = sorted((corpus_dir() / "raw" / "claude_code").glob("*.jsonl"))
    if not files:
        print("no Claude Code sessions: set CTXLAB_CORPUS to the folder holding raw/claude_code")
        return 1
    header = (
        f"{'session':10} {'req':>4} {'cmp':>3} {'ratio':>6} {'fixed':>7} {'raw':>6} "
        f"{'calib':>6} {'before':>6} {'after':>6} {'heldout':>7} {'shuffled':>8} {'no-cmp':>7} "
        f"{'brk':>5}"
    )
    print(header)
    everything: list[float] = []
    for path in files:
        transcript = load(path)
        calibration = calibrate(transcript)
        frame = calibration.frame()
        assert sorted(frame["billed"]) == sorted(raw_bills(path)), f"{path.name}: bills differ"
        everything.extend(frame["error"])
        fit = calibration.fit()
        assert fit is not None
        points = list(calibration.points)
        bills = [p.billed for p in points]
        random.Random(0).shuffle(bills)
        shuffled = fit_points(
            [dataclasses.replace(p, billed=b) for p, b in zip(points, bills, strict=True)]
        )
        blind = calibrate(
            Transcript(
                transcript.name,
                {**transcript.meta, "compactions": []},
                transcript.system,
                transcript.messages,
                usage=transcript.usage,
            )
        )
        blind_after = blind.frame()[(frame["segment"] > 0).to_numpy()]["error"].median()
        before = frame[frame["segment"] == 0]["error"].median()
        after = frame[frame["segment"] > 0]["error"].median()
        print(
            f"{path.stem[:8]:10} {len(frame):4d} {frame['segment'].max():3d} {fit.ratio:6.3f} "
            f"{fit.fixed[0]:7,.0f} {calibration.raw_median_error:6.1%} "
            f"{calibration.median_error:6.1%} {before:6.1%} {after:6.1%} "
            f"{held_out(points):7.1%} {shuffled.median_error:8.1%} {blind_after:7.1%} "
            f"{len(calibration.breaks):>2}/{len(blind.breaks):<2}"
        )
    print(f"\nall requests: median calibrated error {statistics.median(everything):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
