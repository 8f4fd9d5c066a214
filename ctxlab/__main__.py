"""``python -m ctxlab demo``: run a demo session headless and print one row per preparation.
``python -m ctxlab sweep``: replay sessions under presets and windows; one row per case."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from ctxlab import PRESETS, ContextConfig, sweep
from ctxlab.agent import CompactionEvent, ContextBuildEvent, Event, ReplyEvent
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.exceptions import CtxlabError, WriteError
from ctxlab.manifest import PLACEMENTS, step_row, transform_info
from ctxlab.models import AnthropicModel, DemoModel, Model
from ctxlab.util._files import write_atomic


def _row(step: int | None, event: ContextBuildEvent, compactions: list[str]) -> str:
    # ``step``: the request's number as the Lab shows it; None for a summary request, which
    # the Lab prices with its reasoning request and does not number.
    row = step_row(event.manifest, step=step or 0, call=event.call)
    kinds = ",".join(sorted({t.kind for t in event.manifest.transforms}))
    number = f"{step:>4}" if step is not None else "   ·"
    return (
        f"{number} {row['purpose']:<10} "
        + " ".join(f"{row[c]:>7}" for c in PLACEMENTS)
        + f" {row['total']:>7}/{row['input_limit']:<7} {row['validation']:<8} "
        + (kinds or "-")
        + (f"  [{'; '.join(compactions)}]" if compactions else "")
    )


async def run_demo(prompt: str, workspace: str | None, model: Model) -> int:
    """Run one call of the demo agent and print the per-step table."""
    agent = demo_agent(workspace, model=model)
    print(f"workspace: {agent.workspace}\nmodel: {model.name} (window {model.context_window})\n")
    print(
        f"{'req':>4} {'purpose':<10} "
        + " ".join(f"{c[:7]:>7}" for c in PLACEMENTS)
        + f" {'total/limit':>15} {'valid':<8} transforms"
    )
    step = -1  # reasoning requests, numbered from 0 as in the Lab and its step table
    prepared = 0
    last: ContextBuildEvent | None = None
    compactions: list[str] = []
    reply = ""
    start = time.perf_counter()

    def flush() -> None:
        nonlocal last, compactions
        if last is not None:
            numbered = last.manifest.purpose in ("reasoning", "recovery")
            print(_row(step if numbered else None, last, compactions))
        last, compactions = None, []

    events: list[Event] = []
    async for event in agent.stream_events(prompt):
        events.append(event)
        if isinstance(event, ContextBuildEvent):
            flush()
            prepared += 1
            if event.manifest.purpose in ("reasoning", "recovery"):
                step += 1
            last = event
        elif isinstance(event, CompactionEvent):
            compactions.append(
                f"{event.trigger} {event.method} {event.tokens_before}->{event.tokens_after}"
            )
        elif isinstance(event, ReplyEvent):
            reply = event.text
    flush()
    seconds = time.perf_counter() - start
    offloads = sum(
        1
        for e in events
        if isinstance(e, ContextBuildEvent)
        for t in e.manifest.transforms
        if transform_info(t.kind).effect == "offload"
    )
    compacted = sum(1 for e in events if isinstance(e, CompactionEvent))
    print(
        f"\n{step + 1} requests ({prepared} preparations with the summary requests), "
        f"{offloads} offloads, {compacted} compactions, {seconds:.1f} s\n"
    )
    print(reply)
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    """``python -m ctxlab sweep``: the frame as CSV (to ``--out`` or standard output)."""
    names = args.presets or list(PRESETS)
    unknown = [n for n in names if n not in PRESETS]
    if unknown:
        print(f"unknown preset {unknown[0]!r}; choose from {', '.join(PRESETS)}", file=sys.stderr)
        return 2
    configs = {name: ContextConfig.preset(name) for name in names}
    windows = args.windows or [32_000]
    problem = _out_problem(args.out) or _sweep_problem(args)
    if problem:
        # Before the sweep runs, not after: its results would have nowhere to go.
        print(problem, file=sys.stderr)
        return 2
    client = None
    try:
        if args.scheduler or args.workers:
            client = _dask_client(args)
        frame = sweep(args.sessions, configs, windows, executor=client, cache_dir=args.cache)
    except CtxlabError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (OSError, RuntimeError, TimeoutError) as exc:
        # The Dask cluster or scheduler could not be started or reached.
        where = args.scheduler or f"a local cluster of {args.workers} workers"
        print(f"cannot sweep on {where}: {exc}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            client.close()
    for finding in frame.attrs.get("findings", ()):
        print(finding, file=sys.stderr)
    return _write_frame(frame.to_csv(index=False), len(frame), args.out)


def _dask_client(args: argparse.Namespace) -> Any:
    """A Dask client of ``--scheduler``, else of a local cluster of ``--workers``."""
    import importlib
    import logging

    # Untyped for mypy: a Dask client is only handed on to `sweep`.
    dask: Any = importlib.import_module("distributed")
    if args.scheduler:
        return dask.Client(args.scheduler)
    cluster = dask.LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        # A free loopback port: None would bind 8787, which another
        # cluster (or one still closing) may hold.
        dashboard_address="127.0.0.1:0",
        host="127.0.0.1",
        silence_logs=logging.ERROR,
    )
    return dask.Client(cluster)


def _write_frame(text: str, cases: int, out: str | None) -> int:
    """The sweep's CSV to ``out`` (else standard output); the exit status."""
    if not out:
        sys.stdout.write(text)
        return 0
    try:
        write_atomic(out, text, what="sweep's results")
    except WriteError as exc:
        # The sweep ran: its frame goes to standard output rather than being lost.
        print(f"{exc}; the results follow on standard output", file=sys.stderr)
        sys.stdout.write(text)
        return 2
    print(f"{cases} cases -> {out}", file=sys.stderr)
    return 0


def _sweep_problem(args: argparse.Namespace) -> str | None:
    # The other arguments a sweep would fail on late: said before it starts.
    if args.workers is not None and args.workers < 0:
        return f"--workers must be 0 (in this process) or more, got {args.workers}"
    if args.cache and Path(args.cache).exists() and not Path(args.cache).is_dir():
        return f"--cache {args.cache!r} is a file; give a folder for the cache of finished cases"
    bad = [w for w in args.windows or () if w <= 0]
    if bad:
        return f"--window must be a positive number of tokens, got {bad[0]}"
    missing = [s for s in args.sessions if not Path(s).is_file()]
    if missing:
        return f"no session file {missing[0]!r}; give files ctxlab.load reads"
    return None


def _out_problem(out: str | None) -> str | None:
    # What would stop the results being written to ``--out``, checked before a long sweep.
    if not out:
        return None
    path = Path(out)
    if path.is_dir():
        return f"--out {out!r} is a folder; give a file name such as {str(path / 'sweep.csv')!r}"
    if not path.parent.is_dir():
        return f"--out {out!r}: the folder {str(path.parent)!r} does not exist; create it first"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the offline demo session and print its steps")
    demo.add_argument("--prompt", default=DEMO_PROMPT)
    demo.add_argument("--workspace", help="folder for the sample project (default: a temp dir)")
    demo.add_argument("--window", type=int, default=None, help="the demo model's context window")
    demo.add_argument(
        "--claude",
        metavar="MODEL",
        help="use Claude (e.g. claude-sonnet-4-6) instead of the demo model; needs ANTHROPIC_API_KEY",
    )
    batch = sub.add_parser("sweep", help="replay sessions under presets and windows (a CSV)")
    batch.add_argument("sessions", nargs="+", help="session files ctxlab.load reads")
    batch.add_argument(
        "--preset", action="append", dest="presets", help="a preset (repeat; default: all)"
    )
    batch.add_argument("--window", action="append", type=int, dest="windows", help="(repeat)")
    batch.add_argument("--workers", type=int, default=0, help="Dask LocalCluster workers")
    batch.add_argument("--scheduler", help="a Dask scheduler's address instead")
    batch.add_argument("--cache", help="a folder for the Parquet cache of finished cases")
    batch.add_argument("--out", help="write the frame here as CSV (default: print it)")
    args = parser.parse_args(argv)
    if args.command == "sweep":
        return run_sweep(args)
    if args.window is not None and args.window <= 0:
        print(f"--window must be a positive number of tokens, got {args.window}", file=sys.stderr)
        return 2
    if args.claude:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            print("--claude needs ANTHROPIC_API_KEY in the environment", file=sys.stderr)
            return 2
        model: Model = AnthropicModel(args.claude)
    else:
        model = DemoModel(context_window=args.window) if args.window else DemoModel()
    try:
        return asyncio.run(run_demo(args.prompt, args.workspace, model))
    except CtxlabError as exc:
        # A bad argument or folder: the message says what to do; never a traceback.
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
