"""The cache model against the bill on every raw Claude Code file of the corpus.

    PYTHONPATH=$PWD CTXLAB_CORPUS=/path/to/corpus python benchmarks/cache_agreement.py

For each session file and subagent file (``$CTXLAB_CORPUS/raw/claude_code``), as recorded:

- ``agree``: requests whose modelled cache read is within 2 % of the recorded one
  (`ctxlab.cache_check`, `CacheAgreement`), of the trusted billed requests;
- ``indep``: the same figure from an independent bill (``tests/analysis/raw_claude_bill.py``:
  Anthropic's rules read afresh, over the raw file), and whether it agrees with ctxlab's
  modelled reads and writes request by request (``same``);
- controls that must score lower: the model without the recording's clock (``no clock``) and
  the recorded reads shuffled among the requests, each request's bill total kept (``shuffled``);
- ``$ recorded`` against ``$ bill``: the recorded view's cost (the Lab's step table) and the
  independent bill of the recorded usage, and their ratio.

Then the pooled figures and the disagreeing requests by why.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import sys
from pathlib import Path

from ctxlab import load
from ctxlab.analysis import cache_agreement, cache_check
from ctxlab.analysis._bill_check import CAUSES
from ctxlab.io._transcript import corpus_dir
from ctxlab.widgets import Lab
from tests.analysis.claude_code_sessions import shuffled_reads
from tests.analysis.raw_claude_bill import bill, dollars, read_session


def independent(path: Path) -> tuple[int, list[tuple[int, int]]]:
    """Requests the independent bill's reads agree on, and its (read, write) per request."""
    requests = read_session(path)
    billed = bill(requests)
    agreeing = sum(
        abs(b.read - r.read) <= 0.02 * (r.read if r.read else r.billed)
        for r, b in zip(requests, billed, strict=True)
    )
    return agreeing, [(b.read, b.write) for b in billed]


async def recorded_dollars(path: Path) -> float:
    lab = await Lab.open(path, context_window=1_000_000)
    total = float(sum(lab.steps["cost"]))
    lab.close()
    return total


def main() -> int:
    raw = corpus_dir() / "raw" / "claude_code"
    files = sorted([*raw.glob("*.jsonl"), *raw.glob("*/subagents/*.jsonl")])
    if not files:
        print(f"no raw Claude Code files under {raw}: set CTXLAB_CORPUS")
        return 1
    head = "file                      reqs  agree        indep same  no clock  shuffled"
    print(head + "  $ recorded     $ bill  ratio")
    totals = collections.Counter()
    why = collections.Counter()
    for path in files:
        transcript = load(path)
        frame = cache_check(transcript)
        agreement = cache_agreement(frame)
        blind = cache_agreement(cache_check(dataclasses.replace(transcript, times={})))
        mixed = cache_agreement(cache_check(shuffled_reads(transcript)))
        agreeing, theirs = independent(path)
        columns = zip(frame["modelled_read"], frame["modelled_write"], strict=True)
        ours = [(int(r), int(w)) for r, w in columns]
        mine = asyncio.run(recorded_dollars(path))
        theirs_dollars = sum(dollars(r) for r in read_session(path))
        totals.update(
            agree=agreement.agreeing,
            compared=agreement.compared,
            indep=agreeing,
            blind=blind.agreeing,
            shuffled=mixed.agreeing,
            same=ours == theirs,
            files=1,
        )
        why.update(c for c in frame["cause"] if c)
        name = path.name if path.parent == raw else f"{path.parent.parent.name[:8]}/{path.name}"
        print(
            f"{name[:25]:25} {agreement.compared:5} {agreement.agreeing:4} "
            f"{agreement.share:6.1%} {agreeing:8} {'yes' if ours == theirs else 'NO':>4} "
            f"{blind.agreeing:9} {mixed.agreeing:9} {mine:11.4f} {theirs_dollars:10.4f} "
            f"{mine / theirs_dollars:6.4f}"
        )
    compared = totals["compared"]
    print(
        f"\npooled: {totals['agree']} of {compared} ({totals['agree'] / compared:.1%}) within 2 %;"
        f" independent bill {totals['indep']}; without the clock {totals['blind']}; shuffled "
        f"reads {totals['shuffled']}; ctxlab and the independent bill identical on "
        f"{totals['same']} of {totals['files']} files"
    )
    print("disagreeing or left out, by cause:")
    for cause, count in why.most_common():
        print(f"  {count:3}  {cause}: {CAUSES[cause]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
