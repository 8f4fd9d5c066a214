"""Scale benchmark: time and peak memory per request of a what-if as sessions grow (both must stay
flat), and the what-if's first load and re-replay at 500 and 5,000 requests.

    python benchmarks/scale_bench.py [--steps 1000 2000 4000 10000] [--window 200000]
        [--sources real synthetic] [--what whatif lab latency] [--latency-steps 500 5000]

Each size runs in a fresh Python process (cold: nothing cached, nothing shared with another
size): a session of that many requests — ``real``: the corpus sessions stitched end to end (tool
ids made unique; synthetic when the corpus is absent); ``synthetic``: a generated tool loop — is
loaded, then `WhatIf` replays it under the ``ctxlab`` preset at the window and prices it; and,
apart, the Lab opens it as recorded (the view `Lab.open` shows first: every request the
recording holds). Printed per size: the peak resident memory of the process (``ru_maxrss``),
the part of it the what-if added over the loaded session, time per request, and the ratio of
each to the smallest size's per-request figure — flat time keeps "ms/req" ratios near 1, linear
memory keeps "MB added per 1k requests" flat, and doubling the steps at most doubles the peak.

``latency``: at each of ``--latency-steps`` (32k window, as the what-if lab's own benchmark),
the median of three fresh processes (``--repeats``) of: the first load (a cold `WhatIf.run`
and its first ``table()`` — the costs beside the two
reference policies, priced then; pandas imported before the clock, as in a notebook; and again
with the counter's vocabulary built in the clock, not by ``load_transcript`` before it) and the
median of three re-replays under a new trigger ratio (``set_config`` and the table: counts
reused), against the targets (500 requests: 150 ms and 60 ms; 5,000:
ten times those). Counting uses `default_counter` (printed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

CHILD = r"""
import asyncio, gc, json, resource, sys, time
sys.path.insert(0, {here!r})
from whatif_bench import stitched
from ctxlab import ContextConfig, Transcript, load_transcript
from ctxlab.analysis._whatif import WhatIf
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

steps, window, source = {steps}, {window}, {source!r}
files = sorted((corpus_dir() / "norm").glob("*.jsonl")) if source == "real" else []
if files:
    sessions = [load_transcript(f) for f in files]
    session = stitched(sessions * (1 + steps // 2000), steps)
else:
    messages = [UserMessage(content="Find the failing test and fix it.")]
    for n in range(steps):
        use = ToolUseBlock(id=f"c{{n}}", name="bash", input={{"command": f"grep -n err log{{n}}"}})
        messages += [AssistantMessage(content=(use,)),
                     UserMessage(content=(ToolResultBlock(tool_use_id=f"c{{n}}",
                                 content=f"log{{n}}: error {{n}}\n" * 40),))]
    session = Transcript("synthetic", {{}}, "You fix code.", tuple(messages))
gc.collect()
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
if {what!r} == "latency":
    import statistics
    import pandas  # imported before the clock, as in a notebook (the Lab imports it)
    if {vocab_cold}:
        # The counter's vocabulary as if nothing had loaded it (load_transcript starts it on a
        # background thread): the build it started is awaited, then dropped.
        from ctxlab.tokens import _toktok, toktok_available
        if toktok_available():
            import toktok
            _toktok._tokenizer("cl100k_base")
            toktok._CACHE.clear()
    started = time.perf_counter()
    what = WhatIf(session, {{"ctxlab": ContextConfig.preset("ctxlab")}}, context_window=window,
                  summary_calls=False)
    asyncio.run(what.run())
    requests = int(what.table().loc["ctxlab", "requests"])  # what the lab shows: priced
    first = time.perf_counter() - started
    again = []
    for n in range(3):
        tick = time.perf_counter()
        asyncio.run(what.set_config("ctxlab", ContextConfig(trigger_ratio=0.6 + 0.05 * n)))
        what.table()
        again.append(time.perf_counter() - tick)
    from ctxlab.tokens import default_counter
    print(json.dumps({{"steps": steps, "requests": requests, "first_ms": first * 1000,
                      "again_ms": statistics.median(again) * 1000, "corpus": bool(files),
                      "counter": default_counter().method}}))
    sys.exit(0)
if {what!r} == "whatif":
    what = WhatIf(session, {{"ctxlab": ContextConfig.preset("ctxlab")}}, context_window=window,
                  summary_calls=False)
    asyncio.run(what.run())
    requests = int(what.table().loc["ctxlab", "requests"])
else:  # the Lab over the recording, as recorded (what Lab.open shows first)
    from ctxlab.widgets import Lab
    lab = asyncio.run(Lab.open(session, context_window=window))
    requests = len(lab.log)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"steps": steps, "requests": requests,
                  "loaded_mb": loaded / 1024, "peak_mb": peak / 1024, "seconds": seconds,
                  "corpus": bool(files)}}))
"""


def measure(
    steps: int, window: int, what: str, source: str = "real", vocab_cold: bool = False
) -> dict[str, Any]:
    code = CHILD.format(
        here=str(HERE), steps=steps, window=window, what=what, source=source, vocab_cold=vocab_cold
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[1000, 2000, 4000, 10000])
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument(
        "--what",
        nargs="+",
        default=["whatif", "lab", "latency"],
        choices=["whatif", "lab", "latency"],
    )
    parser.add_argument(
        "--sources", nargs="+", default=["real", "synthetic"], choices=["real", "synthetic"]
    )
    parser.add_argument("--latency-steps", type=int, nargs="+", default=[500, 5000])
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per latency figure (median)"
    )
    args = parser.parse_args()
    for source in args.sources:
        for what in args.what:
            if what == "latency":
                latency([latency_row(n, source, args.repeats) for n in args.latency_steps])
            else:
                table(
                    [measure(n, args.window, what, source) for n in args.steps], args.window, what
                )


def latency_row(steps: int, source: str, repeats: int) -> dict[str, Any]:
    """Median figures of ``repeats`` fresh processes each way (vocabulary built by the load,
    and built in the clock), run in turn: the machine's speed drifts within minutes."""
    warm, cold = [], []
    for _ in range(repeats):
        warm.append(measure(steps, 32_000, "latency", source))
        cold.append(measure(steps, 32_000, "latency", source, vocab_cold=True))
    return {
        **warm[0],
        "first_ms": statistics.median(r["first_ms"] for r in warm),
        "again_ms": statistics.median(r["again_ms"] for r in warm),
        "cold_ms": statistics.median(r["first_ms"] for r in cold),
        "repeats": repeats,
    }


def latency(rows: list[dict[str, Any]]) -> None:
    """The what-if's first load and re-replay per size, against the targets."""
    kind = "corpus sessions stitched" if rows[0]["corpus"] else "synthetic sessions"
    print(
        f"\nwhat-if latency, 32,000-token window, {kind}, counted with {rows[0]['counter']}; "
        f"median of {rows[0]['repeats']} fresh processes each"
    )
    print(
        f"{'requests':>9} {'first load ms':>14} {'vocab cold':>11} {'target':>7} "
        f"{'re-replay ms':>13} {'target':>7}"
    )
    for row in rows:
        scale = max(row["steps"] / 500, 1)
        print(
            f"{row['requests']:>9,} {row['first_ms']:>14.0f} {row['cold_ms']:>11.0f} "
            f"{150 * scale:>7.0f} {row['again_ms']:>13.0f} {60 * scale:>7.0f}"
        )
    print(
        "first load: after the session is loaded (a notebook's next cell: load_transcript has "
        "built the counter's vocabulary meanwhile — the synthetic session is built in code, so "
        "its first load builds it); vocab cold: the same with the vocabulary built in the clock"
    )


def table(rows: list[dict[str, float]], window: int, what: str) -> None:
    first = rows[0]
    base_added = (first["peak_mb"] - first["loaded_mb"]) / first["requests"]
    base_time = first["seconds"] / first["requests"]
    title = (
        "what-if, ctxlab preset" if what == "whatif" else "Lab.open of the recording, as recorded"
    )
    print(f"\n{title}, {window:,}-token window, one process per size")
    print(
        f"{'requests':>9} {'peak MB':>9} {'added MB':>9} {'MB/1k req':>10} {'ratio':>6} "
        f"{'ms/req':>7} {'ratio':>6}"
    )
    for row in rows:
        added = row["peak_mb"] - row["loaded_mb"]
        per = added / row["requests"]
        ms = row["seconds"] / row["requests"] * 1000
        print(
            f"{row['requests']:>9,} {row['peak_mb']:>9.0f} {added:>9.0f} {per * 1000:>10.1f} "
            f"{per / base_added:>6.2f} {ms:>7.2f} {ms / 1000 / base_time:>6.2f}"
        )
    for small, large in itertools.pairwise(rows):
        print(
            f"peak {large['requests']:,} / {small['requests']:,} requests: "
            f"{large['peak_mb'] / small['peak_mb']:.2f}× for "
            f"{large['requests'] / small['requests']:.2f}× the requests"
        )
    print("corpus sessions stitched" if first["corpus"] else "synthetic sessions")


if __name__ == "__main__":
    main()
