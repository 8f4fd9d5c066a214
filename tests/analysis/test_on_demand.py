"""Analysis on demand: a what-if grades retention and prices only when a figure asks, and the
figures it then computes are the ones the eager code computed (pinned before the change in
``tests/fixtures/whatif_figures.json``: 3 corpus sessions at 16k and 32k, the Claude Code
fixture at 16k and 50k, a billed session; four presets each), and the ones a replay that
grades as it goes gives."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ctxlab import ContextConfig, WhatIf
from ctxlab.analysis._replay import replay
from ctxlab.retention._holds import HeldText
from tests.analysis.whatif_figures import FIXTURE, PRESETS, cases, figures, logs_session
from tests.conftest import corpus_files

PINNED = json.loads(FIXTURE.read_text())


def _cases() -> list[tuple[str, object, int, dict[str, object]]]:
    return list(cases(corpus=bool(corpus_files())))


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
async def test_the_figures_computed_on_demand_are_the_eager_ones(
    case: tuple[str, object, int, dict[str, object]],
) -> None:
    name, transcript, window, keywords = case
    what = WhatIf(
        transcript,  # type: ignore[arg-type]
        {p: ContextConfig.preset(p) for p in PRESETS},
        context_window=window,
        **keywords,  # type: ignore[arg-type]
    )
    await what.run()
    # Nothing graded or priced by the replay: only when a figure asks.
    assert not any(r.graded or r.priced for r in what.runs.values())
    headline = what.headline()
    assert not any(r.graded or r.priced for r in what.runs.values())
    got = figures(what)
    assert all(r.graded and r.priced for r in what.runs.values())
    assert got == PINNED[name]
    # The headline is the table's own figures.
    table = what.table()
    assert headline.equals(table[list(headline.columns)])


def test_the_pinned_cases_compact() -> None:
    # The comparison means something only where compactions are graded.
    def compactions(f: dict[str, Any]) -> int:
        column = f["table"]["columns"].index("compactions")
        return sum(row[column] for row in f["table"]["rows"])

    compacting = [n for n, f in PINNED.items() if compactions(f)]
    assert len(compacting) == 8, compacting


async def test_the_control_a_changed_grader_or_price_changes_the_pinned_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The comparison can fail: a grader that misses every item holding a "1", or an output
    # price doubled, does not give the pinned figures.
    name, transcript, window, keywords = next(iter(cases(corpus=False)))
    configs = {p: ContextConfig.preset(p) for p in PRESETS}

    async def run() -> WhatIf:
        what = WhatIf(transcript, configs, context_window=window, **keywords)  # type: ignore[arg-type]
        await what.run()
        return what

    assert figures(await run()) == PINNED[name]
    # The grader asks each text through `HeldText` (issue 54): blinded there.
    holds = HeldText.holds
    monkeypatch.setattr(
        HeldText, "holds", lambda t, i, path=False: "1" not in i and holds(t, i, path=path)
    )
    blind = figures(await run())
    assert blind["retention"] != PINNED[name]["retention"]
    assert blind["table"] != PINNED[name]["table"]
    monkeypatch.undo()
    dear = await run()
    pricing = dear.runs["ctxlab"]._pricing
    assert pricing is not None
    price = dataclasses.replace(pricing.price, output=pricing.price.output * 2)
    dear.runs["ctxlab"]._pricing = dataclasses.replace(pricing, price=price)
    assert figures(dear)["runs"]["ctxlab"]["costs"] != PINNED[name]["runs"]["ctxlab"]["costs"]


async def test_lazy_grading_equals_grading_as_the_replay_goes() -> None:
    # The in-process eager path: `replay` grading at each compaction, against the run's steps.
    transcript = logs_session()
    what = WhatIf(transcript, {"c": ContextConfig()}, context_window=8_000, counter=None)
    await what.run()
    eager = [
        s
        async for s in replay(
            transcript.messages,
            context_window=8_000,
            counter=what.cache,
            system=transcript.system,
            unrecorded=what.unrecorded,
        )
    ]
    lazy = what.runs["c"].steps
    assert [s.compaction for s in lazy] == [s.compaction for s in eager]
    kept = [s.compaction.retention for s in lazy if s.compaction]
    assert kept and all(r is not None and r.core is not None for r in kept)


async def test_the_step_frame_need_not_wait_for_the_grader() -> None:
    transcript = logs_session()
    what = WhatIf(transcript, {"c": ContextConfig()}, context_window=8_000)
    await what.run()
    quick = what.steps(grade=False)
    run = what.runs["c"]
    assert run.priced and not run.graded
    compacting = quick["compaction"].notna() & (quick["compaction"] != "")
    assert compacting.sum() == sum(s.compaction is not None for s in run.prepared) >= 2
    assert quick["retention"].isna().all()
    full = what.steps()
    assert run.graded and full.loc[compacting, "retention"].notna().all()
    # Apart from retention, the same frame; once graded, grade=False gives the graded one.
    rest = [c for c in full.columns if not c.startswith("retention")]
    assert quick[rest].equals(full[rest])
    assert what.steps(grade=False).equals(full)


async def test_a_replay_grades_a_compaction_when_its_retention_is_read(monkeypatch) -> None:
    # `replay` hands each compaction a grader: nothing is graded until a retention is read,
    # each is graded once, and the grades are those of grading afterwards (`graded_steps`).
    import pickle

    import ctxlab.analysis._replay_requests as replay_module
    from ctxlab import ApproximateCounter
    from ctxlab.analysis._grading import graded_steps

    graded: list[int] = []
    real = replay_module.compaction_retention

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        graded.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(replay_module, "compaction_retention", counting)
    transcript = logs_session()
    options: dict[str, Any] = dict(
        context_window=8_000, counter=ApproximateCounter(), system=transcript.system
    )
    steps = [s async for s in replay(transcript.messages, **options)]
    records = [s.compaction for s in steps if s.compaction is not None]
    assert len(records) >= 2 and graded == []  # replayed, nothing graded
    first = records[0].retention
    assert first is not None and first.core is not None and len(graded) == 1
    assert records[0].retention is first and len(graded) == 1  # kept once graded
    # A pickled record (a sweep's worker) carries its grade, not the grader.
    copy = pickle.loads(pickle.dumps(records[1]))
    assert len(graded) == 2 and copy.retention == records[1].retention
    unread = [s async for s in replay(transcript.messages, grade=False, **options)]
    later = graded_steps(unread, transcript.messages)
    assert [s.compaction for s in later] == [s.compaction for s in steps]
    assert all(r.retention is not None for r in records)
