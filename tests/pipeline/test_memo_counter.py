"""A `PreparationMemo` never changes a result, only its cost — also when the counter changes
between two preparations with one memo: what it kept was counted by the other counter (the scan's
counts, the system's and tools' items, the common step's last step), and is made again. A counter
of the same method (a new object each step, as ``counter=default_counter()`` in a loop makes) is
the same counting, and keeps what the memo holds (as `CountStore` keys counts by method)."""

from __future__ import annotations

from ctxlab import ApproximateCounter, WorkingState, prepare
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import PreparationMemo
from ctxlab.tokens import default_counter

TEXT = "the quick brown fox jumps over the lazy dog, " * 40
FIRST = WorkingState.of([UserMessage(content=TEXT), AssistantMessage(content="ok " * 30)])
LONGER = FIRST.append(UserMessage(content=TEXT + " again"))


async def _tokens(state: WorkingState, counter: object, memo: PreparationMemo | None) -> int:
    done = await prepare(state, context_window=100_000, counter=counter, memo=memo)  # type: ignore[arg-type]
    return done.manifest.estimated_input_tokens


async def test_a_memo_made_by_another_counter_gives_that_counters_figures() -> None:
    exact, rough = default_counter(), ApproximateCounter()
    assert exact.method != rough.method
    for state in (FIRST, LONGER):  # the same conversation (full path), one appended (common)
        memo = PreparationMemo()
        await _tokens(FIRST, rough, memo)
        alone = await _tokens(state, exact, None)
        assert await _tokens(state, exact, memo) == alone
        # The figures differ by counter: a memo that kept the other's counts would be caught.
        assert alone != await _tokens(state, rough, None)


async def test_a_new_counter_of_the_same_method_keeps_what_the_memo_holds() -> None:
    memo = PreparationMemo()
    await _tokens(FIRST, default_counter(), memo)
    kept = memo.scan
    assert await _tokens(LONGER, default_counter(), memo) == await _tokens(
        LONGER, default_counter(), None
    )
    assert memo.scan is kept  # the common step moved the same scan on: nothing made again
