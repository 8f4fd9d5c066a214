"""Server-side clearing billed as sent: a what-if whose config clears tool results on the
server (``clear_tool_uses_20250919`` below the window) against the independent bill, which
replays the session whole and clears for itself from the context-editing guide
(`tests.analysis.anthropic_bill.Clearing`) — request by request, to the token. Control: the bill
of the requests unedited differs."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._whatif import WhatIf
from ctxlab.config import ClearToolUses
from ctxlab.tokens import TokenCache
from tests.analysis.test_cost_as_sent import (
    CONFIGS,
    _as_tuples,
    _bills,
    _compare,
    _compared,
    _generated,
    _session,
    independent_bill,
)


def _clearing(
    trigger: int,
    keep: int = 3,
    clear_at_least: int = 0,
    inputs: bool = False,
    exclude: tuple[str, ...] = (),
) -> ContextConfig:
    """The server's clearing preset with its tool-use clear at ``trigger`` input tokens (the
    preset's 100,000 never fires at these windows)."""
    preset = CONFIGS["anthropic_context_editing"]
    assert preset.provider_edits is not None
    clear = ClearToolUses(
        trigger_input_tokens=trigger,
        keep=keep,
        clear_at_least=clear_at_least,
        clear_tool_inputs=inputs,
        exclude_tools=exclude,
    )
    edits = preset.provider_edits.model_copy(update={"clear_tool_uses": clear})
    return preset.model_copy(update={"provider_edits": edits})


def _cleared(run: ConfigRun) -> list[int]:
    """The steps whose request the server's tool-use clear edited."""
    return [
        n
        for n, step in enumerate(run.steps)
        if any(t.kind == "provider_clear_tool_uses" for t in step.manifest.transforms)
    ]


@_generated(40)
@given(
    turns=st.integers(6, 20),
    sizes=st.lists(st.integers(5, 300), min_size=1, max_size=4),
    fan=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    window=st.sampled_from([6_000, 9_000, 14_000, 24_000]),
    trigger=st.floats(0.15, 0.85),
    keep=st.integers(0, 4),
    clear_at_least=st.sampled_from([0, 300, 3_000]),
    inputs=st.booleans(),
    exclude=st.sampled_from([(), ("read",)]),
    system=st.sampled_from(["", "You fix bugs. " * 200]),
)
async def test_server_clearing_is_billed_as_sent_at_every_window(
    turns: int,
    sizes: list[int],
    fan: list[int],
    window: int,
    trigger: float,
    keep: int,
    clear_at_least: int,
    inputs: bool,
    exclude: tuple[str, ...],
    system: str,
) -> None:
    """The server's tool-use clear firing below the window (its trigger a share of it): each
    request priced as the edited request the server bills, the cache broken where the first
    cleared block sits."""
    transcript = _session(turns, sizes, fan, system, tools=("bash", "read"))
    config = _clearing(int(window * trigger), keep, clear_at_least, inputs, exclude)
    _, run = await _compared(transcript, config, window, TokenCache(ApproximateCounter()))
    event(f"requests cleared by the server: {'some' if _cleared(run) else 'none'}")


async def test_server_side_clearing_is_billed_as_sent() -> None:
    """The case Hypothesis found (no clear fired in it: a span summarized in two pieces, each
    sent alone under no System — the pipeline sized them so), and a session the server clears
    at 9k: the first cleared request reads less of the cache than the one before it, and
    writes more than it reads (the prefix breaks at the oldest cleared result)."""
    cache = TokenCache(ApproximateCounter())
    found = _session(11, [27, 399], [1], "You fix bugs. " * 200)
    forms = await _compare(found, CONFIGS["anthropic_context_editing"], 14_000, cache)
    assert forms == ["alone", "alone"]
    cleared = _session(14, [60], [2, 1], "You fix bugs. " * 200)
    _, run = await _compared(cleared, _clearing(4_000, keep=2), 9_000, cache)
    clears = _cleared(run)
    assert clears
    reasoning = [c for c in run.costs if c.purpose == "reasoning"]
    first = clears[0]
    # The request before the first clear is read whole (all but its last turn); after the
    # clear, only the prefix before the oldest result — a rewrite of everything after it.
    assert reasoning[first].cache_read < reasoning[first - 1].cache_read
    assert reasoning[first].cache_write > reasoning[first].cache_read


async def test_an_unpriced_clear_is_caught() -> None:
    """Control: the bill of the same session sent unedited (the clear never priced) differs
    from the what-if's — the comparison sees a clear the cost model would leave out."""
    cache = TokenCache(ApproximateCounter())
    session = _session(14, [60], [2, 1], "You fix bugs. " * 200)
    config = _clearing(4_000, keep=2)
    what = WhatIf(session, {"c": config}, context_window=9_000, counter=cache)
    await what.run()
    unedited = config.model_copy(update={"provider_edits": None})
    bills, _ = await independent_bill(session, unedited, 9_000, cache)
    assert len(bills) == len(what.runs["c"].costs)
    assert _as_tuples(what.runs["c"].costs) != _bills(bills)
