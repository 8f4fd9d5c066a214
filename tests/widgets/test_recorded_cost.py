"""A recording shown as recorded costs its bill: each request with usage its recorded usage at
its own model's price (``priced_from`` ``usage``), checked against a bill computed from the raw
file by independent code (`tests.analysis.raw_claude_bill`) — within 1 %, request by request,
on the committed real session and on every raw Claude Code file of the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.io._transcript import corpus_dir

pytest.importorskip("ipywidgets")

from ctxlab.widgets import Lab
from tests.analysis.raw_claude_bill import dollars, read_session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "claude_code"
REAL = FIXTURE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
RAW = corpus_dir() / "raw" / "claude_code"
CORPUS = sorted([*RAW.glob("*.jsonl"), *RAW.glob("*/subagents/*.jsonl")])


async def _costs(path: Path, view: str = "recorded") -> tuple[list[float], list[str]]:
    lab = await Lab.open(path, context_window=1_000_000, view=view)  # type: ignore[arg-type]
    steps = lab.steps
    lab.close()
    return [float(c) for c in steps["cost"]], list(steps["priced_from"])


async def test_the_recorded_view_of_a_real_session_costs_its_bill_request_by_request() -> None:
    costs, sources = await _costs(REAL)
    bill = [dollars(r) for r in read_session(REAL)]
    assert len(costs) == len(bill) == 20
    assert sources == ["usage"] * 20
    for mine, theirs in zip(costs, bill, strict=True):
        assert mine == pytest.approx(theirs, rel=0.01)
    # The session switched from Opus 4.6 to Haiku 4.5: priced at one model's price it would
    # be far off the bill (the per-request price is what makes it agree).
    requests = read_session(REAL)
    assert {r.model for r in requests} == {"claude-opus-4-6", "claude-haiku-4-5-20251001"}
    assert sum(costs) == pytest.approx(sum(bill), rel=0.01)


async def test_the_replayed_view_is_priced_by_the_model_never_by_the_recorded_bill() -> None:
    costs, sources = await _costs(REAL, view="replayed")
    assert set(sources) == {"model"}
    bill = sum(dollars(r) for r in read_session(REAL))
    # ctxlab's own requests, not the recording's: not its bill.
    assert sum(costs) != pytest.approx(bill, rel=0.01)


@pytest.mark.skipif(not CORPUS, reason="no raw Claude Code files: set CTXLAB_CORPUS (raw/)")
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
async def test_every_corpus_recording_as_recorded_costs_its_bill(path: Path) -> None:
    costs, sources = await _costs(path)
    requests = read_session(path)
    assert len(costs) == len(requests)
    assert set(sources) == {"usage"}
    bill = [dollars(r) for r in requests]
    off = [n for n, (a, b) in enumerate(zip(costs, bill, strict=True)) if abs(a - b) > 0.01 * b]
    assert not off, off
    assert sum(costs) == pytest.approx(sum(bill), rel=0.01)
