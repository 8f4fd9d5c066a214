"""What a what-if, a replay and a price accept: a window is a whole number of tokens, a price a
finite number from 0 — anything else is a `UsageError` naming the argument and the value, before
any work (hypothesis too); a model that costs nothing makes no cost ratio (NaN), not a 100 %
saving, and says so."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig, Transcript, WhatIf
from ctxlab.analysis import LongContext, Price
from ctxlab.analysis._sync import run_sync
from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.tokens import ApproximateCounter
from ctxlab.util._checks import MAX_WINDOW, context_window
from tests.hostile import says
from tests.strategies import SETTINGS

SESSION = Transcript(
    "s",
    {},
    "Be brief.",
    (
        UserMessage(content="one " * 300),
        AssistantMessage(content="two " * 300),
        UserMessage(content="three " * 300),
        AssistantMessage(content="four"),
    ),
)


@pytest.mark.parametrize("window", [0, -5, math.nan, math.inf, "32000", True, 2.5, 10**9])
def test_a_whatif_window_that_is_no_window_is_refused(window: Any) -> None:
    with pytest.raises(UsageError, match=r"context_window must be a whole number of tokens"):
        WhatIf(SESSION, {"a": ContextConfig()}, context_window=window)


def test_a_whole_float_window_is_that_window() -> None:
    assert WhatIf(SESSION, {"a": ContextConfig()}, context_window=32000.0).context_window == 32000  # type: ignore[arg-type]


def test_replay_checks_its_window() -> None:
    from ctxlab.analysis import replay

    async def first() -> Any:
        return await anext(
            aiter(replay(SESSION.messages, context_window=-1, counter=ApproximateCounter()))
        )

    with pytest.raises(UsageError, match="got -1"):
        run_sync(first())


@pytest.mark.parametrize(
    ("fields", "name"),
    [((-1, 1, 1, 1), "input"), ((1, math.nan, 1, 1), "output"), ((1, 1, "3", 1), "cache_write")],
)
def test_a_price_that_is_no_price_is_refused(fields: tuple[Any, ...], name: str) -> None:
    with pytest.raises(UsageError, match=rf"Price\.{name} must be a price in USD"):
        Price(*fields)


def test_a_price_that_is_not_a_price_object_is_refused() -> None:
    with pytest.raises(UsageError, match="price must be a Price"):
        WhatIf(SESSION, {"a": ContextConfig()}, context_window=32000, price={"input": 3})  # type: ignore[arg-type]


def test_a_free_model_makes_no_cost_ratio() -> None:
    what = WhatIf(SESSION, {"a": ContextConfig()}, context_window=32000, price=Price(0, 0, 0, 0))
    run_sync(what.run())
    table = what.table()
    row = table.loc["a"]
    assert row["cost"] == 0
    assert math.isnan(row["cost_vs_baseline"]) and math.isnan(row["cost_vs_no_compaction"])
    # ... and says why, where a user reads the table: its verdict (under the Lab's table) and
    # its pricing (issue 51: the NaN came with no word).
    says(table.attrs["verdict"], "every config costs $0", "the price is $0", "cost_vs_baseline")
    says(table.attrs["verdict"], "are NaN", "no ratio to a cost of nothing", "tokens_sent")
    says(table.attrs["pricing"], "$0 for every token", "cost_vs_baseline", "NaN")
    assert what.references().attrs["pricing"] == table.attrs["pricing"]
    priced = WhatIf(
        SESSION, {"a": ContextConfig()}, context_window=32000, price=Price(3, 15, 3.75, 0.3)
    )
    run_sync(priced.run())
    assert priced.table().loc["a", "cost_vs_no_compaction"] == pytest.approx(1.0)
    assert "NaN" not in priced.verdict() and "NaN" not in priced.pricing  # control


@pytest.mark.parametrize(
    ("price", "free"),
    [
        (Price(0, 0, 0, 0), True),
        (Price(0, 0, 0, 0, cache_write_1h=0.0), True),
        (Price(0, 0.01, 0, 0), False),
        (Price(0, 0, 0, 0, cache_write_1h=1.0), False),
        (Price(0, 0, 0, 0, long_context=LongContext(200_000, Price(1, 1, 1, 1))), False),
        (Price.unknown("local-llm"), False),
    ],
)
def test_a_price_is_free_only_when_every_figure_is_0(price: Price, free: bool) -> None:
    assert price.free is free
    assert ("$0 for every token" in price.label) is free


def test_a_sweep_of_a_free_model_says_why_its_ratios_are_nan() -> None:
    from ctxlab import sweep

    frame = sweep(
        [SESSION],
        {"a": ContextConfig(), "b": ContextConfig(trigger_ratio=0.5)},
        windows=[32_000],
        price=Price(0, 0, 0, 0),
        progress=False,
    )
    assert frame["error"].isna().all() and (frame["cost"] == 0).all()
    assert frame["cost_vs_baseline"].isna().all()
    verdict, priced = frame.attrs["findings"]
    # It said "no config ran to the end", though both did.
    assert "ran to the end" not in verdict
    says(verdict, "costs nothing", "cost_vs_baseline is NaN", "tokens_sent")
    says(priced, "1 of 1 sessions are priced at $0 for every token", "NaN", ": s")


@SETTINGS
@given(
    st.one_of(
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=6),
        st.none(),
    )
)
def test_a_window_is_a_whole_number_in_range_or_refused(value: Any) -> None:
    try:
        window = context_window(value)
    except UsageError as exc:
        assert repr(value) in str(exc)
        return
    assert type(window) is int and 0 < window <= MAX_WINDOW and window == value


@SETTINGS
@given(
    st.lists(
        st.one_of(st.floats(allow_nan=True), st.integers(-10, 100), st.text(max_size=3)),
        min_size=4,
        max_size=4,
    )
)
def test_a_price_is_finite_numbers_from_0_or_refused(values: list[Any]) -> None:
    try:
        price = Price(*values)
    except UsageError:
        assert any(isinstance(v, str | bool) or not math.isfinite(v) or v < 0 for v in values)
        return
    assert all(getattr(price, n) >= 0 for n in ("input", "output", "cache_write", "cache_read"))
