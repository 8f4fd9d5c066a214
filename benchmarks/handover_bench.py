"""Does the offline handover tell the state true at small windows? Every corpus session
(``$CTXLAB_CORPUS/norm/*.jsonl``) replayed at each window with the offline summarizer, each
compaction's summary audited against the raw messages it stands for by code that shares
nothing with the summarizer nor the retention grader (`tests/pipeline/handover_audit.py`):

- false "fixed" claims (of all "fixed" claims);
- ``$ cmd  → ok`` lines on a command every run of which failed (of all "→ ok" lines);
- summaries whose discoveries say "none recorded" after a run of their span failed;
- failing outcomes kept: the error lines of each command's last failing run in the span that
  the next request still holds — by the audit's own count, and as `ctxlab.retention` grades its
  ``outcomes`` (pooled over compactions).

Usage: python benchmarks/handover_bench.py [--windows 8000,16000] [--preset NAME] [--only S]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxlab import ContextConfig, TiktokenCounter, load_transcript, replay
from ctxlab.exceptions import CtxlabError
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import request_start
from tests.pipeline.handover_audit import Audit, audit, request_text


async def session(path: Path, window: int, config: ContextConfig) -> tuple[Audit, list[int]]:
    """The session's audit at ``window``, and retention's outcomes (total, kept) pooled."""
    transcript = load_transcript(path)
    # The replay starts at the first message a request can start from: counts are from there.
    messages = transcript.messages[request_start(transcript.messages) :]
    result, graded, done = Audit(), [0, 0], 0
    async for step in replay(
        messages,
        context_window=window,
        counter=TiktokenCounter(),
        config=config,
        system=transcript.system,
        tools=transcript.tools,
    ):
        summary = step.state.summary
        if step.compaction is None or summary is None or not summary.fields:
            continue
        end = summary.compacted_messages
        text = request_text(step.request)
        result.add(audit(summary.fields, messages[:end], messages[done:end], text))
        done = end
        kept = step.compaction.retention
        if kept is not None:
            graded[0] += kept["outcomes"].total
            graded[1] += kept["outcomes"].kept
    return result, graded


def _share(kept: int, total: int) -> str:
    return f"{100 * kept / total:.1f} % ({kept}/{total})" if total else "n/a"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", default="8000,16000")
    parser.add_argument("--preset", default="agentscope")
    parser.add_argument("--only", default="")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    config = ContextConfig.preset(args.preset) if args.preset != "defaults" else ContextConfig()
    files = [p for p in sorted((corpus_dir() / "norm").glob("*.jsonl")) if args.only in p.name]
    for window in (int(w) for w in args.windows.split(",")):
        total, graded = Audit(), [0, 0]
        for path in files:
            try:
                found, kept = await session(path, window, config)
            except CtxlabError as error:  # a session this window cannot hold: said, skipped
                print(f"  {path.stem[:50]}: not replayed ({type(error).__name__})")
                continue
            total.add(found)
            graded = [graded[0] + kept[0], graded[1] + kept[1]]
            if args.verbose:
                for said in [*found.false_fixed, *found.false_ok, *found.lost]:
                    print(f"  {path.stem[:40]}: {said[:300]}")
        print(f"window {window} ({args.preset or 'defaults'}), {len(files)} sessions,")
        print(f"  summaries {total.summaries}")
        print(f"  false fixed {len(total.false_fixed)} of {total.fixed}")
        print(f"  '→ ok' on never-passing commands {len(total.false_ok)} of {total.ok}")
        print(f"  'none recorded' after a failed run {total.none_after_failure}")
        print(f"  failing outcomes kept (audit) {_share(total.outcomes_kept, total.outcomes)}")
        print(f"  outcomes kept (ctxlab.retention) {_share(graded[1], graded[0])}")


if __name__ == "__main__":
    asyncio.run(main())
