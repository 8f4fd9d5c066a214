"""The feasible baseline against an outsider's, on every session of the corpus.

    PYTHONPATH=$PWD CTXLAB_CORPUS=/path/to/corpus python benchmarks/baseline_outsider_bench.py

For each normalized session (``$CTXLAB_CORPUS/norm/*.jsonl``) and each raw Claude Code recording
(``$CTXLAB_CORPUS/raw/claude_code/*.jsonl``: its clock, its bill's unrecorded part, the cache
lifetime its usage shows), at 16k, 32k and 200k: the what-if's feasible baseline
(`WhatIf.references`, `WhatIf.baseline`) and the one rebuilt from docs/concepts/cost.md alone
(`tests/analysis/outsider_baseline.py`, no code of ``ctxlab/analysis``) — requests, over_limit,
input tokens, cost — and the largest relative gap of the four. A session whose model no table prices is priced at Claude Sonnet 4.5's list price
under Anthropic's rules (said ``*``), so every session's cost is compared.

The control, a rule dropping the newest turns before the latest first, is more than 2 % apart
on most sessions where the baseline drops anything (``drops``: it sends fewer tokens than the
whole session); not where every request is cut (the raw recordings at 16k: their unrecorded part
alone fills the room) or nearly (at 32k), nor where the only drop is of the one turn before the
latest.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator

from ctxlab import Transcript, load
from ctxlab.analysis._cost import CacheRules, Price
from ctxlab.analysis._prices import price_for, recorded_model
from ctxlab.io._transcript import corpus_dir, load_transcript
from tests.analysis.baseline_agreement import Agreement, agreement
from tests.conftest import corpus_files

WINDOWS = (16_000, 32_000, 200_000)
SONNET = price_for("claude-sonnet-4-5")


def _row(name: str, window: int, found: Agreement, control: float, drops: bool, star: str) -> str:
    ours, theirs = found.ctxlab, found.outsider
    return (
        f"{name[:44]:44} {window // 1000:>4}k {ours.requests:>4} {theirs.requests:>4} "
        f"{ours.over_limit:>3} {theirs.over_limit:>3} {ours.input_tokens:>10,} "
        f"{theirs.input_tokens:>10,} {ours.cost:>8.4f}{star} {theirs.cost:>8.4f} "
        f"{found.worst:>8.2%} {'yes' if drops else 'no':>5} {control:>8.2%}"
    )


def _sessions() -> Iterator[tuple[str, Transcript]]:
    for path in corpus_files():
        yield path.stem, load_transcript(path)
    for path in sorted((corpus_dir() / "raw" / "claude_code").glob("*.jsonl")):
        yield "raw " + path.stem, load(path)


def main() -> int:
    files = corpus_files()
    if not files:
        print("no corpus: set CTXLAB_CORPUS to the folder holding norm/*.jsonl")
        return 1
    print(
        f"{'session':44} {'win':>5} {'req':>4} {'out':>4} {'ovr':>3} {'out':>3} "
        f"{'input':>10} {'outsider':>10} {'cost $':>9} {'outsider':>8} {'worst':>8} "
        f"{'drops':>5} {'control':>8}"
    )
    started = time.perf_counter()
    gaps: dict[int, list[float]] = {w: [] for w in WINDOWS}
    controls: dict[int, list[float]] = {w: [] for w in WINDOWS}
    count = 0
    for name, transcript in _sessions():
        count += 1
        priced = price_for(recorded_model(transcript.meta)).known
        price: Price | None = None if priced else SONNET
        rules = None if priced else CacheRules.anthropic()
        whole = agreement(transcript, 10**7, price=price, rules=rules).ctxlab.input_tokens
        for window in WINDOWS:
            found = agreement(transcript, window, price=price, rules=rules)
            control = agreement(transcript, window, "newest", price=price, rules=rules)
            drops = found.ctxlab.input_tokens < whole
            gaps[window].append(found.worst)
            if drops:
                controls[window].append(control.worst)
            star = " " if priced else "*"
            print(_row(name, window, found, control.worst, drops, star))
    print(f"\n{count} sessions, {time.perf_counter() - started:.1f} s")
    for window in WINDOWS:
        agree = gaps[window]
        apart = controls[window]
        print(
            f"{window // 1000:>4}k: the outsider within 0.5 % on {sum(g <= 0.005 for g in agree)}"
            f"/{len(agree)} sessions, within 2 % on {sum(g <= 0.02 for g in agree)}, largest "
            f"gap {max(agree):.2e}; the control more than 2 % apart on "
            f"{sum(g > 0.02 for g in apart)}/{len(apart)} sessions that drop turns"
        )
    worst = max(g for w in WINDOWS for g in gaps[w])
    return 0 if worst <= 0.02 and not math.isnan(worst) else 1


if __name__ == "__main__":
    sys.exit(main())
