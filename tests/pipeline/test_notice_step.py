"""The common step of a long session (issue 54, item 3): no material but the usage notice, built
at once — not through `Budgeted.adding`, `omit` and the ordering, which give the same for it
alone — its manifest item hashing the notice once; and without a summary or material, the
request shares the conversation's tuple instead of copying it at every step."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, TokenCache, WorkingState, prepare
from ctxlab.materials import ContextBlock
from ctxlab.messages import TextBlock
from ctxlab.pipeline import Budgeted, PreparationMemo, project
from ctxlab.pipeline._layout import material_item
from ctxlab.pipeline._stages import NO_MATERIAL, material_tokens
from tests.helpers import lines_of, session

LINES = lines_of(notice_tokens=5_000, reserve_tokens=2_000)


def _noticed(budgeted: Budgeted, base_tokens: int, with_notice: bool = True) -> Budgeted:
    return project(
        budgeted,
        (),
        cache=TokenCache(ApproximateCounter()),
        projection=None,
        base_tokens=base_tokens,
        thresholds=LINES,
        purpose="reasoning",
        tool_enabled=False,
        with_notice=with_notice,
    )


@settings(max_examples=60, deadline=None, database=None)
@given(base=st.integers(0, 20_000), with_notice=st.booleans(), omitted=st.booleans())
def test_the_notice_alone_is_what_the_general_path_builds(
    base: int, with_notice: bool, omitted: bool
) -> None:
    # The general path, forced by a selection policy (asked for nothing: nothing is optional),
    # against the shortcut; an earlier omission's tokens and transform are carried either way.
    tokens = {"source/old": 300} if omitted else {}
    start = Budgeted((), tokens)
    general = _noticed(Budgeted((), tokens, policy=lambda materials: []), base, with_notice)
    quick = _noticed(start, base, with_notice)
    assert quick.kept == general.kept
    assert quick.tokens == general.tokens
    assert quick.transforms == general.transforms
    shown = with_notice and base > LINES.notice_tokens
    assert [m.item_id for m in quick.kept] == (["runtime/context_usage"] if shown else [])
    if shown:
        notice = quick.kept[0]
        text = notice.render()
        assert str(base) in text and f"{100 * base / 10_000:.0f}%" in text
        # The notice's tokens: its rendered text counted, with a message's framing.
        assert (
            quick.tokens["runtime/context_usage"]
            == material_tokens((notice,), TokenCache(ApproximateCounter()))["runtime/context_usage"]
        )
        assert quick.total == quick.tokens["runtime/context_usage"] > 0


def test_no_notice_below_its_line_leaves_no_material() -> None:
    assert _noticed(NO_MATERIAL, LINES.notice_tokens).kept == ()
    assert _noticed(NO_MATERIAL, LINES.notice_tokens + 1, with_notice=False).kept == ()


def test_a_material_item_hashes_its_block_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A block's hash is a SHA-256 of its text computed at every read: the notice's item, built
    # at every step of a long session, reads it once for its hash and its revision.
    reads: list[str] = []
    real = ContextBlock.content_hash

    def counted(block: ContextBlock) -> str:
        reads.append(block.id)
        return real.fget(block)  # type: ignore[attr-defined,no-any-return]

    notice = _noticed(NO_MATERIAL, 6_000).kept[0]
    monkeypatch.setattr(ContextBlock, "content_hash", property(counted))
    item = material_item(notice, 42)
    assert reads == ["context_usage"]
    assert item.content_hash == item.revision == real.fget(notice.block)  # type: ignore[attr-defined]
    assert (item.id, item.kind, item.placement, item.tokens) == (
        "runtime/context_usage",
        "notice",
        "transient",
        42,
    )


async def test_a_request_without_summary_or_material_shares_the_conversation() -> None:
    # Nothing to put before or after it: the request sends the state's own tuple (immutable),
    # not a copy made at every step; with the notice after it, a new tuple holds both.
    messages = session(6, output_chars=200)
    state = WorkingState(conversation=tuple(messages[:5]))
    memo, cache = PreparationMemo(), TokenCache(ApproximateCounter())
    first = await prepare(state, context_window=100_000, counter=cache, memo=memo)
    assert first.request.messages == state.conversation
    # The next step, as an agent or a replay makes it: the committed state and what arrived.
    state = first.state.append(*messages[5:7])
    quiet = await prepare(state, context_window=100_000, counter=cache, memo=memo)
    assert quiet.request.messages is state.conversation
    assert quiet.state is state and len(state.conversation) == 7
    noticed = await prepare(
        state,
        context_window=10_000,
        counter=cache,
        config=ContextConfig(trigger_ratio=0.9, context_buffer_ratio=0.895),  # notice at 50
    )
    tail = noticed.request.messages[7].content[0]
    assert isinstance(tail, TextBlock) and "Context usage:" in tail.text
    assert noticed.request.messages[:7] == state.conversation
    assert len(noticed.request.messages) == 8 and noticed.request.material_messages == 1
