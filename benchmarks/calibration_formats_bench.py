"""Calibration out of sample on recordings of any format: the figures a Lab over each shows.

    python benchmarks/calibration_formats_bench.py PATH [PATH ...]

A path is a session file or a folder of them (Gemini CLI chats, Codex rollouts, Claude Code
sessions...). For each recording with usage, as recorded: its requests with a bill, zero bills
(usage recorded as 0), the fitted ratio and how it was found, the median |forecast − billed| ÷
billed out of sample (each request forecast from the requests before it: what the recorded view
plots), the same in sample, the worst forecast as a factor of its bill, how many forecasts are
more than 1.5× off, and how many of those carry no flag (`ctxlab.analysis._calibration`'s
``bill_flag``, what the Lab's header, step table and plot show). The last column must be 0.

The bills are read back from the importer's usage; a format-blind check of them is the
census's business (``ctxlab.io._census``).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from ctxlab import calibrate, load
from ctxlab.analysis._calibration import bill_flag
from ctxlab.exceptions import CtxlabError


def _files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in paths:
        path = Path(name)
        out.extend(sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path])
    return out


def _factor(estimate: float, billed: float) -> float:
    if billed <= 0 or estimate <= 0:
        return float("inf")
    return max(estimate / billed, billed / estimate)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 1
    print(
        f"{'session':42} {'req':>4} {'zero':>4} {'ratio':>6} {'from':>8} {'oos':>6} "
        f"{'in':>6} {'worst':>9} {'>1.5x':>5} {'unflagged':>9}"
    )
    medians: list[float] = []
    for path in _files(paths):
        try:
            transcript = load(path)
        except CtxlabError as exc:
            print(f"{path.name[:42]:42} not loaded: {str(exc)[:60]}")
            continue
        calibration = calibrate(transcript)
        fit = calibration.fit()
        if fit is None:
            print(f"{path.name[:42]:42} no usage")
            continue
        rows = calibration.rows
        factors = [
            (_factor(float(r["forecast"]), float(r["billed"])), r)  # type: ignore[arg-type]
            for r in rows
            if r["forecast"] is not None
        ]
        off = [(f, r) for f, r in factors if f > 1.5]
        unflagged = [r for _, r in off if not bill_flag(r["forecast"], r["billed"])]  # type: ignore[arg-type]
        worst = max((f for f, _ in factors), default=float("nan"))
        outside = calibration.out_of_sample_error
        if outside is not None:
            medians.append(outside)
        zero = len(calibration.zero_bills)
        print(
            f"{path.name[:42]:42} {len(rows):4d} {zero:4d} {fit.ratio:6.3f} "
            f"{fit.ratio_from.split()[-1][:8]:>8} "
            f"{outside if outside is not None else float('nan'):6.1%} "
            f"{calibration.median_error or 0:6.1%} {worst:9.2f} {len(off):5d} {len(unflagged):9d}"
        )
    if medians:
        print(f"\nmedian of the sessions' out-of-sample medians: {statistics.median(medians):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
