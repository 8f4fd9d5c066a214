"""Every figure a what-if gives, in one canonical form: the table (its attrs too), the
references, retention by category, the step frame, each run's costs and each compaction's
retention (every category, what it lost). Used to pin the figures computed before analysis was
made lazy (``tests/fixtures/whatif_figures.json``) and to compare them with the lazily-made ones.

    python -m tests.analysis.whatif_figures   # rewrites the fixture (only to pin new figures)

Floats are written with ``repr`` (shortest exact form): two figures equal here are equal to the
last bit. Large frames are pinned by a digest of that form.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf, load
from ctxlab.analysis._comparison import REWRITE_COLUMNS
from ctxlab.io._transcript import corpus_dir, load_transcript
from ctxlab.manifest import ProviderUsage
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

FIXTURE = Path(__file__).parent.parent / "fixtures" / "whatif_figures.json"
PRESETS = ("ctxlab", "agentscope", "harness", "observation_masking")
CORPUS = (
    "claude_code__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "mini_swe_agent__django__django-11138.jsonl",
    "mini_swe_agent__sympy__sympy-13091.jsonl",
)
"""Corpus sessions (by name under ``$CTXLAB_CORPUS/norm``) that compact at both windows."""
WINDOWS = (16_000, 32_000)
FIXTURES = Path(__file__).parent.parent / "fixtures"


def logs_session(
    turns: int = 24,
    line: str = "app{n} request {r} failed at src/app{n}.py",
    name: str = "logs",
) -> Transcript:
    """A session with a bill (usage on every reply): calibration and the bill's figures. Each
    tool output is ``line`` (``{n}``: the call's number, ``{r}``: 1000 + n) 60 times."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read every log.")]
    usage = {}
    for n in range(turns):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat /var/log/app{n}.log"})
        usage[len(messages)] = ProviderUsage(10, 5, 300 * n, 300)
        messages.append(AssistantMessage(content=(use,)))
        text = (line.format(n=n, r=1000 + n) + "\n") * 60
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=text),)))
    usage[len(messages)] = ProviderUsage(10, 5, 300 * turns, 300)
    messages.append(AssistantMessage(content="All read."))
    # A recording names its model: its costs are that model's (an unknown one is unpriced).
    meta = {"models": ["claude-sonnet-4-6"]}
    return Transcript(name, meta, "You read logs.", tuple(messages), usage=usage)


def cases(*, corpus: bool) -> Iterator[tuple[str, Transcript, int, dict[str, Any]]]:
    """(name, transcript, window, WhatIf keywords) of every pinned case."""
    yield "logs@8000", logs_session(), 8_000, {"counter": ApproximateCounter()}
    recorded = load(FIXTURES / "claude_code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    for window in (16_000, 50_000):
        yield f"claude_code_fixture@{window}", recorded, window, {}
    if corpus:
        for name in CORPUS:
            transcript = load_transcript(corpus_dir() / "norm" / name)
            for window in WINDOWS:
                yield f"{name[:30]}@{window}", transcript, window, {}


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, str | bool | int):
        return value
    if hasattr(value, "item"):  # a numpy scalar
        return _canonical(value.item())
    return repr(value)  # pd.NA and the like


def _frame(frame: Any) -> Any:
    table = frame.reset_index() if frame.index.name else frame
    return _canonical(
        {
            "columns": list(table.columns),
            "rows": table.astype(object).values.tolist(),
            "attrs": dict(frame.attrs),
        }
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def figures(what: WhatIf) -> dict[str, Any]:
    """Every figure of ``what`` (run), canonical; computing any that are not yet computed."""
    # The figures pinned before the cache had a clock and before break-evens: the re-write
    # columns, the clock's sentence and compactions_paid_back are checked by their own tests
    # (tests/analysis/test_whatif_clock.py, tests/analysis/test_breakeven*).
    # Columns added after the figures were pinned are tested on their own.
    later = ["compactions_paid_back", "next_use_retention", "next_use_floor"]
    table = what.table().drop(columns=["replay_ms", *REWRITE_COLUMNS, *later])
    del table.attrs["cache_clock"]
    runs = {}
    for name, run in what.runs.items():
        kept = [
            {
                "step": n,
                "method": s.compaction.method,
                "rows": s.compaction.retention.rows() if s.compaction.retention else None,
                "lost": s.compaction.retention.lost if s.compaction.retention else None,
            }
            for n, s in enumerate(run.steps)
            if s.compaction is not None
        ]
        costs = [
            (c.purpose, c.cache_read, c.cache_write, c.uncached, c.output, c.cost)
            for c in run.costs
        ]
        runs[name] = {
            "retention": _digest(_canonical(kept)),
            "costs": _digest(_canonical(costs)),
            "error": run.error,
        }
    return {
        "table": _frame(table),
        "references": _frame(what.references()),
        "retention": _digest(_frame(what.retention())),
        "steps": _digest(_frame(what.steps().drop(columns=[], errors="ignore"))),
        "runs": runs,
    }


async def compute(*, corpus: bool) -> dict[str, Any]:
    """The figures of every case, from the eager code of the time."""
    out = {}
    for name, transcript, window, keywords in cases(corpus=corpus):
        configs = {p: ContextConfig.preset(p) for p in PRESETS}
        what = WhatIf(transcript, configs, context_window=window, **keywords)
        await what.run()
        out[name] = figures(what)
    return out


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(asyncio.run(compute(corpus=True)), indent=1, sort_keys=True))
