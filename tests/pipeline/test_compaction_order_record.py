"""The on-demand rule that asked reaches a compaction's record through the compaction itself
(review of stop 64): `reduce_conversation` takes the request's `CompactionOrder` and builds
the record whole — ``asked`` typed as `AskRule` — and the manifest's transform names the rule
too; the event reads the record's, so one place says it. The control: an order no rule gave
compacts with ``asked`` None everywhere."""

from __future__ import annotations

import typing

from ctxlab import ContextConfig, TokenCache, default_counter
from ctxlab.events import CompactionEvent
from ctxlab.manifest import AskRule, Thresholds, asked_by
from ctxlab.pipeline import (
    CompactionOrder,
    CompactionRecord,
    ReductionLimits,
    extractive_summarizer,
    reduce_conversation,
)
from tests.helpers import session

LINES = Thresholds.compute(ContextConfig(), 10_000)


async def _reduced(order: CompactionOrder) -> tuple[CompactionRecord, list[str], list[object]]:
    messages = tuple(session(16, output_chars=1_200))  # more than the 1,000-token reserve
    reduction = await reduce_conversation(
        messages,
        None,
        config=ContextConfig(),
        cache=TokenCache(default_counter()),
        limits=ReductionLimits.of(LINES, 0),  # far under the line: only the order compacts
        summarizer=extractive_summarizer,
        order=order,
    )
    assert reduction.compaction is not None
    kinds = [t.kind for t in reduction.transforms]
    return reduction.compaction, kinds, [asked_by(t) for t in reduction.transforms]


async def test_an_asked_order_is_on_the_record_and_the_transform() -> None:
    order = CompactionOrder(force=True, keep_arrived=True, asked="tokens")
    record, kinds, asked = await _reduced(order)
    assert record.asked == "tokens"
    assert kinds[-1] == "history_compaction" and asked[-1] == "tokens"
    event = CompactionEvent("on_demand", record)
    assert event.asked == "tokens"  # the record's: the event holds no copy of its own


async def test_the_control_an_order_no_rule_gave_names_none() -> None:
    record, kinds, asked = await _reduced(CompactionOrder(force=True))
    assert record.asked is None and kinds[-1] == "history_compaction"
    assert asked == [None] * len(asked)
    assert CompactionEvent("automatic", record).asked is None


def test_the_record_and_the_order_type_the_rule() -> None:
    expected = typing.Optional[AskRule]  # noqa: UP045 - compared as typing builds it
    assert typing.get_type_hints(CompactionRecord)["asked"] == expected
    assert typing.get_type_hints(CompactionOrder)["asked"] == expected
    assert typing.get_args(AskRule) == ("task", "requests", "tokens", "idle")
