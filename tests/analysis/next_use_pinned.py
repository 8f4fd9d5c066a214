"""Every next-use grade a what-if gives, in one canonical form, digested: each compaction's items,
whether the request held each, what was fresh and the floor, for the pinned what-if cases
(`tests.analysis.whatif_figures.cases`) under the presets and ``ctxlab`` at other triggers. Pinned in ``tests/fixtures/
next_use_figures.json`` from the quadratic grader (main at 3b075b5, which rebuilt the text
before each compaction), to show the linear grader of issue 54 gives every grade unchanged.

    PYTHONPATH=<a checkout> python tests/analysis/next_use_pinned.py   # rewrites the fixture
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ctxlab import ContextConfig, WhatIf
from ctxlab.analysis._grading import next_use_of
from ctxlab.retention._next_use import NextUse
from tests.analysis.whatif_figures import PRESETS, _canonical, _digest, cases

TRIGGERS = (0.6, 0.85)
FIXTURE = Path(__file__).parent.parent / "fixtures" / "next_use_figures.json"


def grade_form(graded: list[NextUse]) -> Any:
    """``graded`` in canonical form: every field of every compaction's grade."""
    return _canonical(
        [
            {
                "step": g.step,
                "items": [(i.kind, i.text) for i in g.items],
                "held": list(g.held),
                "fresh": [(i.kind, i.text) for i in g.fresh],
                "floor": g.floor,
            }
            for g in graded
        ]
    )


async def compute(*, corpus: bool) -> dict[str, dict[str, str]]:
    """Case → preset → the digest of its grades (and how many compactions were graded)."""
    out: dict[str, dict[str, str]] = {}
    for name, transcript, window, keywords in cases(corpus=corpus):
        configs = {p: ContextConfig.preset(p) for p in PRESETS}
        for ratio in TRIGGERS:  # compactions elsewhere: other prefixes graded
            configs[f"ctxlab@{ratio}"] = ContextConfig.preset("ctxlab").model_copy(
                update={"trigger_ratio": ratio}
            )
        what = WhatIf(transcript, configs, context_window=window, **keywords)
        await what.run()
        out[name] = {}
        for preset, run in what.runs.items():
            graded = next_use_of(run.prepared, transcript.messages, transcript.system)
            out[name][preset] = f"{len(graded)}:{_digest(grade_form(graded))}"
    return out


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(asyncio.run(compute(corpus=True)), indent=1, sort_keys=True))
