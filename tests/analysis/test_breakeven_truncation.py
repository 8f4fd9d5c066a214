"""A compaction whose summary failed and fell back to truncation is named by its method in
the break-even table: ``automatic truncation``, not ``summary`` (the method is read from the
transform, `ctxlab.manifest._kinds.OWN_COMPACTION_METHODS`). The control: a summary that
succeeds stays ``automatic summary``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab import ContextConfig
from ctxlab.analysis._breakeven_of import manifest_break_evens
from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._price import Price
from ctxlab.manifest import item_rows
from ctxlab.pipeline import SummaryRequest
from tests.helpers import prepared, session
from tests.pipeline.test_pipeline import fixed_summary

PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)


async def _failing(request: SummaryRequest) -> Mapping[str, Any]:
    raise RuntimeError("model unavailable")


async def _labels(**summarizer: Any) -> list[str]:
    config = ContextConfig.preset("ctxlab").merge(compaction={"keep_messages": 4})
    prep = await prepared(session(30), context_window=4_000, config=config, **summarizer)
    assert prep.compaction is not None  # the trigger line fired
    evens = manifest_break_evens([prep.manifest], PRICE, CacheRules("anthropic"))
    return [e.label for e in evens]


async def test_a_truncation_is_named_truncation() -> None:
    assert await _labels(summarizer=_failing) == ["automatic truncation"]


async def test_the_control_a_summary_is_named_summary() -> None:
    assert await _labels(summarizer=fixed_summary) == ["automatic summary"]


async def test_the_items_table_puts_a_truncation_on_the_summary() -> None:
    """The manifest's item rows give the truncation to the summary that stands for what it
    dropped (as a summary's compaction is): badge and reason on the summary's row."""
    config = ContextConfig.preset("ctxlab").merge(compaction={"keep_messages": 4})
    prep = await prepared(session(30), context_window=4_000, config=config, summarizer=_failing)
    rows = {row.kind: row for row in item_rows(prep.manifest, prep.request)}
    assert rows["summary"].badges == ("dropped",)
    assert "messages dropped (no summary could be made)" in rows["summary"].why
