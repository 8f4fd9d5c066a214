"""Sweep benchmark: the shared corpus × 6 configs × 2 windows on a Dask LocalCluster with one
worker, then with two — the speed-up, in one run.

    python benchmarks/sweep_bench.py [--repeat 2] [--windows 32000 64000]

Every repeat of every contender starts a fresh cluster (cold workers: nothing tokenized, nothing
imported); the timing covers the sweep, not the cluster's start. The same sessions, configs and
windows for both. The client's peak memory is printed: sessions are held once by the client and
scattered once to the cluster; results stream back per (session, window) group.

Needs the corpus (``$CTXLAB_CORPUS``, default ``../shared/corpus``) and ``ctxlab[sweep]``.
"""

from __future__ import annotations

import argparse
import logging
import resource
import statistics
import sys
import time

from ctxlab import ContextConfig, load_transcript, sweep
from ctxlab.io._transcript import corpus_dir

CONFIGS = {
    **{
        name: ContextConfig.preset(name)
        for name in ("ctxlab", "agentscope", "harness", "langchain")
    },
    "observation_masking": ContextConfig.preset("observation_masking"),
    "trigger-0.6": ContextConfig(trigger_ratio=0.6),
}


def timed(sessions: list, windows: list[int], workers: int) -> float:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            host="127.0.0.1",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        started = time.perf_counter()
        frame = sweep(sessions, CONFIGS, windows, executor=client, progress=False)
        seconds = time.perf_counter() - started
    failed = int(frame["error"].notna().sum())
    print(f"  {workers} worker(s): {seconds:.1f} s, {len(frame)} cases, {failed} failed")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 64_000])
    args = parser.parse_args()
    files = sorted((corpus_dir() / "norm").glob("*.jsonl"))
    if not files:
        sys.exit(f"no corpus at {corpus_dir()}: set CTXLAB_CORPUS")
    sessions = [load_transcript(f) for f in files]
    print(f"{len(sessions)} sessions × {len(CONFIGS)} configs × {len(args.windows)} windows")
    one, two = [], []
    for _ in range(args.repeat):
        one.append(timed(sessions, args.windows, 1))
        two.append(timed(sessions, args.windows, 2))
    speedup = statistics.median(one) / statistics.median(two)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"median: 1 worker {statistics.median(one):.1f} s, 2 workers {statistics.median(two):.1f} s"
        f" -> speed-up {speedup:.2f}x (target 1.7x); client peak memory {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
