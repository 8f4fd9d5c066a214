"""`RowColumns` reads each row once and gives the columns a full read would."""

from __future__ import annotations

import numpy as np

from ctxlab.widgets._columns import RowColumns


def _rows(count: int, base: int = 0) -> list[dict[str, int | None]]:
    return [{"a": base + n, "b": None if n % 3 else 2 * n} for n in range(count)]


def test_growing_rows_give_the_columns_of_a_full_read() -> None:
    columns = RowColumns(("a", "b"), np.int32)
    rows = _rows(0)
    for size in (1, 5, 64, 65, 300, 1_000):  # past the first buffer, and twice past it
        rows.extend(_rows(size)[len(rows) :])
        got = columns.of(rows)
        assert got["a"].tolist() == [r["a"] for r in rows]
        assert got["b"].tolist() == [r["b"] or 0 for r in rows]


def test_rows_replaced_are_read_again() -> None:
    columns = RowColumns(("a",), np.int32)
    first = _rows(10)
    assert columns.of(first)["a"].tolist() == list(range(10))
    # Another log as long (a what-if's view, a new session): other row objects, other values.
    other = _rows(10, base=100)
    assert columns.of(other)["a"].tolist() == list(range(100, 110))
    # A shorter one, and one whose last known row was replaced.
    assert columns.of(other[:4])["a"].tolist() == list(range(100, 104))
    edited = [*other[:3], {"a": -1, "b": 0}, *_rows(2, base=7)]
    assert columns.of(edited)["a"].tolist() == [100, 101, 102, -1, 7, 8]


async def test_the_live_usage_line_has_every_bill_as_it_arrives() -> None:
    # As a live agent's events come: each request drawn, then its bill, which arrives after
    # the row was read (the redraw must read that row again).
    from ctxlab import ApproximateCounter, ContextConfig
    from ctxlab.agent import Agent, ContextBuildEvent, ModelResponseEvent
    from ctxlab.analysis._replay import replay
    from ctxlab.manifest import ProviderUsage
    from ctxlab.messages import AssistantMessage, UserMessage
    from ctxlab.models import ScriptedModel
    from ctxlab.widgets import Lab

    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Go.")]
    for n in range(6):
        messages += [AssistantMessage(content=f"step {n}"), UserMessage(content=f"more {n}")]
    lab = Lab(Agent(model=ScriptedModel([], context_window=32_000)))
    bills = []
    async for step in replay(
        messages, context_window=32_000, counter=ApproximateCounter(), config=ContextConfig()
    ):
        manifest = step.manifest
        lab._on_event(ContextBuildEvent(manifest, "t", None))
        bill = 1_000 + 7 * len(bills)
        bills.append(bill)
        usage = ProviderUsage(bill, 10)
        reply = AssistantMessage(content="ok")
        lab._on_event(ModelResponseEvent(reply, "end_turn", usage, manifest.call_id, "t"))
        trace = lab.budget.trace("provider usage")
        assert list(trace["x"]) == list(range(len(bills)))
        assert list(trace["y"]) == bills


def test_a_count_past_int32_widens_the_columns_and_keeps_it_exact() -> None:
    # A file may bill up to 2⁴⁰ tokens (`MAX_TOKENS`); int32 columns raised OverflowError and
    # the Lab over the file failed. Every column turns float64 (exact to 2⁵³), the rows read
    # before kept, the later ones and a changed one too.
    columns = RowColumns(("a", "b"), np.int32)
    rows: list[dict[str, int | None]] = [{"a": 1, "b": 2}, {"a": 3, "b": None}]
    assert columns.of(rows)["a"].dtype == np.int32
    rows.append({"a": 2**40 + 1, "b": 5})
    got = columns.of(rows)
    assert got["a"].dtype == got["b"].dtype == np.float64
    assert got["a"].tolist() == [1, 3, 2**40 + 1] and got["b"].tolist() == [2, 0, 5]
    rows[0] = {"a": 2**41, "b": 7}
    assert columns.of(rows, changed=[0])["a"].tolist()[0] == 2**41
