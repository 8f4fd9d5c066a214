"""The offline summary of generated histories is the one the summarizer wrote before i66-summ cut
its cost (issue 54 item 3): the implementations before are kept here — the span reader that read
every run's warnings (`test_span_calls_kept.reference_span`), a result's scan that read every
output's telling line, the value pattern written branch by branch without possessive runs
(`test_value_patterns.VALUE`) — and a history is summarized by both, in two compactions (the
second carrying the first's summary forward), at budgets wide and tight. A control: the
reference with one rule changed (the last run's warnings left out) writes another summary. The corpus's side is `test_summary_digest.py`."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._handover as handover
import tests.pipeline.test_span_calls_kept as before
from ctxlab.messages import Summary
from ctxlab.pipeline._span import Span, _scan_result, _telling
from tests.helpers import Message, exchange, extractive_fields
from tests.retention.test_value_patterns import VALUE

_OLD_VALUE = re.compile(VALUE)


def _old_values(text: str) -> tuple[str, ...]:
    return tuple(_OLD_VALUE.findall(text))


def _old_read_result(output: str, is_error: bool) -> tuple[str, str, tuple[str, ...], bool, str]:
    # The scan before: every result's telling line read (the rest of the scan is unchanged).
    outcome, status, failures, failed, _ = _scan_result(output, is_error)
    return outcome, status, failures, failed, _telling(output)


async def _two_compactions(messages: list[Message], cut: int, budget: int) -> list[dict[str, str]]:
    first = await extractive_fields(messages[:cut], None, budget=budget)
    carried = Summary(fields=first, text="(the first summary)")
    return [first, await extractive_fields(messages[cut:], carried, budget=budget)]


def _summaries_before(
    messages: list[Message], cut: int, budget: int, reader: Callable[[list[Message]], Span]
) -> list[dict[str, str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(before, "_values", _old_values)
        patch.setattr(before, "_read_result", _old_read_result)
        patch.setattr(handover, "read_span", reader)
        return asyncio.run(_two_compactions(messages, cut, budget))


_WARNED = [
    *exchange(
        "a",
        "bash",
        "src/a.py:3: DeprecationWarning: old",
        saying="Running the tests for FooBar.",
        command="pytest tests/test_a.py -q",
    ),
    *exchange("b", "bash", "ok", command="python reproduce.py"),
]


@settings(max_examples=200, deadline=None, database=None)
@given(before.spans(), st.integers(0, 12), st.sampled_from([120, 400, 2_000]))
@example(_WARNED, 0, 2_000)
def test_summaries_are_the_ones_written_before(
    messages: list[Message], cut: int, budget: int
) -> None:
    now = asyncio.run(_two_compactions(messages, cut, budget))
    assert now == _summaries_before(messages, cut, budget, before.reference_span)


def _last_run_not_warned(messages: list[Message]) -> Span:
    """The reader before with one rule changed: the last run's warnings left out."""
    span = before.reference_span(messages)
    done = [n for n, run in enumerate(span.runs) if run.outcome != "no result yet"]
    if done:
        span.runs[done[-1]] = dataclasses.replace(span.runs[done[-1]], warnings=())
    return span


def test_the_comparison_sees_a_changed_rule() -> None:
    warned_last = _WARNED[2:] + _WARNED[:2]  # the run that prints a warning is the last
    now = asyncio.run(_two_compactions(warned_last, 0, 2_000))
    assert now[1]["next_steps"].startswith(
        "`pytest tests/test_a.py -q` still prints warnings: DeprecationWarning: old\n"
    )
    assert now == _summaries_before(warned_last, 0, 2_000, before.reference_span)
    assert now != _summaries_before(warned_last, 0, 2_000, _last_run_not_warned)
