"""A what-if's bill against an independent one (`tests.analysis.anthropic_bill`, Anthropic's
documented rules, no code shared with the cost model): every reasoning request and every
summary call rebuilt as it would be sent and priced — request by request, to the token.

Controls: the same bill without the 20-block look-back, and one that prices every summary call
in its cached form whatever its size, must differ on sessions built to show it. The server's
own clearing below the window: `test_cost_as_sent_clearing.py`."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, Transcript
from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._cost import PRICES, CacheRules
from ctxlab.analysis._references import reference_shapes
from ctxlab.analysis._replay import replay
from ctxlab.analysis._unrecorded import unrecorded_part
from ctxlab.analysis._whatif import WhatIf
from ctxlab.exceptions import ContextOverflowError
from ctxlab.io._transcript import load_transcript
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCache
from tests.analysis.anthropic_bill import (
    MINIMUM,
    UNRECORDED,
    Bill,
    Block,
    Clearing,
    bill,
    message_tokens,
    reasoning_blocks,
    reference_blocks,
    server_cleared,
    summary_blocks,
    unrecorded_first,
)
from tests.conftest import corpus_files, requires_corpus

BILLED_PRICE = PRICES["claude-sonnet-4-6"]
BILLED_RULES = CacheRules.anthropic(MINIMUM)
"""The bill is Anthropic's (Sonnet's minimum): the what-if is asked for Anthropic's price and
rules, whatever model a session recorded (the corpus's longest are Gemini's and Opus 4.6's,
whose own rules are others)."""

SONNET = {"models": ["claude-sonnet-4-6"]}


async def independent_bill(
    transcript: Transcript,
    config: ContextConfig,
    window: int,
    cache: TokenCache,
    *,
    lookback: int | None = 20,
    always_cached: bool = False,
    prices: tuple[float, float] = (3.0, 15.0),
    unrecorded: int = 0,
) -> tuple[list[Bill], list[str]]:
    """The session replayed under ``config`` and every request it sends billed here; with the
    form of each summary call (``cached``, ``alone``). A tool-use clear in ``config`` is the
    server's (`Clearing`): the requests are replayed unedited and cleared here, by the guide.
    ``unrecorded``: tokens a request that the recording does not hold (its harness's own System
    and tools), sent first by every reasoning request and every summary call in its cached
    form (`unrecorded_first`)."""
    requests: list[tuple[list[Block], int]] = []
    pending: list[tuple[list[Block], int]] = []
    forms: list[str] = []
    previous: list[object] = []
    sent_tokens: list[list[int]] = []
    clearing, config = _server_side(config)

    async def summarizer(request: SummaryRequest) -> dict[str, object]:
        last = previous[0] if previous else None
        tokens = sent_tokens[0] if sent_tokens else None
        blocks = summary_blocks(request, last, cache, tokens, unrecorded)  # type: ignore[arg-type]
        if always_cached and last is not None:
            blocks = summary_blocks(  # the control: a limit nothing passes
                SummaryRequest(**{**request.__dict__, "input_limit": 10**9}),  # type: ignore[arg-type]
                last,  # type: ignore[arg-type]
                cache,
            )
        if blocks is None:
            raise ContextOverflowError("the summary request fits neither way")
        answer = await extractive_summarizer(request)
        output = cache.text(json.dumps(answer, ensure_ascii=False))
        pending.append((blocks, output))
        forms.append(
            "cached"
            if any(b.fingerprint.startswith(("system", "tool", UNRECORDED)) for b in blocks)
            else "alone"
        )
        return answer

    async for step in replay(
        transcript.messages,
        context_window=window,
        counter=cache,
        config=config,
        system=transcript.system,
        tools=transcript.tools,
        summarizer=summarizer,
        unrecorded=unrecorded_part(transcript, unrecorded) if unrecorded else None,
    ):
        requests.extend(pending)
        pending.clear()
        assert step.request is not None
        output = cache.message(transcript.messages[step.index])
        sent, tokens = step.request, message_tokens(step.manifest)
        if clearing is not None:
            total = sum(i.tokens for i in step.manifest.items)
            sent, tokens = server_cleared(sent, tokens, total, clearing, cache)
        blocks = reasoning_blocks(sent, step.manifest, cache, tokens)
        requests.append((unrecorded_first(blocks, unrecorded), output))
        previous[:] = [(sent, step.manifest)]
        sent_tokens[:] = [tokens]
    return bill(requests, lookback=lookback, input_price=prices[0], output_price=prices[1]), forms


def _server_side(config: ContextConfig) -> tuple[Clearing | None, ContextConfig]:
    """``config``'s tool-use clear as the server's, and ``config`` without its provider edits
    (the thinking clear has nothing to clear here: the sessions hold no thinking)."""
    edits = config.provider_edits
    if edits is None or edits.clear_tool_uses is None:
        return None, config
    clear = edits.clear_tool_uses
    assert clear.trigger_input_tokens is not None and not isinstance(clear.clear_tool_inputs, tuple)
    assert edits.trim_tool_outputs is None and not edits.openai_truncation
    clearing = Clearing(
        clear.trigger_input_tokens,
        clear.keep,
        clear.clear_at_least,
        clear.exclude_tools,
        bool(clear.clear_tool_inputs),
        clear.placeholder,
    )
    return clearing, config.model_copy(update={"provider_edits": None})


def _as_tuples(costs: Sequence[object]) -> list[tuple[int, int, int, int]]:
    return [
        (c.uncached, c.cache_write, c.cache_read, c.output)  # type: ignore[attr-defined]
        for c in costs
    ]


def _bills(bills: Sequence[Bill]) -> list[tuple[int, int, int, int]]:
    return [(b.uncached, b.written, b.read, b.output) for b in bills]


async def _compare(
    transcript: Transcript, config: ContextConfig, window: int, cache: TokenCache
) -> list[str]:
    """The what-if's costs against the independent bill, request by request; the forms of its
    summary calls."""
    return (await _compared(transcript, config, window, cache))[0]


async def _compared(
    transcript: Transcript,
    config: ContextConfig,
    window: int,
    cache: TokenCache,
    unrecorded: int = 0,
) -> tuple[list[str], ConfigRun]:
    what = WhatIf(
        transcript,
        {"c": config},
        context_window=window,
        counter=cache,
        price=BILLED_PRICE,
        rules=BILLED_RULES,
        unrecorded_tokens=unrecorded or None,
    )
    await what.run()
    run = what.runs["c"]
    assert run.error is None
    # The model's list prices (per million tokens); the cache's multiples are the bill's own.
    prices = (what.price.input, what.price.output)
    bills, forms = await independent_bill(
        transcript, config, window, cache, prices=prices, unrecorded=unrecorded
    )
    assert _as_tuples(run.costs) == _bills(bills)
    assert run.cost == pytest.approx(sum(b.dollars for b in bills), rel=1e-9)
    assert sum(1 for c in run.costs if c.purpose == "summary") == len(forms)
    return forms, run


def _session(
    turns: int,
    sizes: Sequence[int],
    fan: Sequence[int],
    system: str,
    tools: Sequence[str] = ("bash",),
) -> Transcript:
    """``turns`` tool turns, turn n of ``fan[n]`` calls (to ``tools`` in turn) whose results
    are ``sizes[n]`` lines each, after a long first message."""
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Find the failing test and fix it. " + "context " * 300)
    ]
    calls_made = 0
    for n in range(turns):
        width = fan[n % len(fan)]
        names = [tools[(calls_made + k) % len(tools)] for k in range(width)]
        calls_made += width
        calls = tuple(
            ToolUseBlock(id=f"c{n}_{k}", name=name, input={"command": f"cat part{n}_{k}.log"})
            for k, name in enumerate(names)
        )
        messages.append(AssistantMessage(content=(TextBlock(text=f"Step {n}."), *calls)))
        size = sizes[n % len(sizes)]
        results = tuple(
            ToolResultBlock(tool_use_id=c.id, content=f"line {n} of {c.id}: ok\n" * size)
            for c in calls
        )
        messages.append(UserMessage(content=results))
    messages.append(AssistantMessage(content="Fixed."))
    return Transcript(name="generated", meta=SONNET, system=system, messages=tuple(messages))


def _generated(examples: int) -> settings:
    """A property's settings: ``examples`` sessions, each replayed however long it takes."""
    return settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )


CONFIGS = {
    "ctxlab": ContextConfig.preset("ctxlab"),
    "langchain": ContextConfig.preset("langchain"),
    "masking": ContextConfig.preset("observation_masking"),
    "anthropic_context_editing": ContextConfig.preset("anthropic_context_editing"),
}


@_generated(12)
@given(
    turns=st.integers(6, 24),
    sizes=st.lists(st.integers(5, 400), min_size=1, max_size=4),
    fan=st.lists(st.integers(1, 14), min_size=1, max_size=3),
    window=st.sampled_from([6_000, 9_000, 14_000]),
    config=st.sampled_from(sorted(CONFIGS)),
    system=st.sampled_from(["", "You fix bugs. " * 200]),
)
async def test_generated_sessions_are_billed_as_sent(
    turns: int, sizes: list[int], fan: list[int], window: int, config: str, system: str
) -> None:
    transcript = _session(turns, sizes, fan, system)
    await _compare(transcript, CONFIGS[config], window, TokenCache(ApproximateCounter()))


async def test_both_forms_of_summary_call_are_met_and_billed() -> None:
    """Large turns at a small window make the cached form too large: the span goes alone;
    small turns at a larger window leave it room, and it reads the cache."""
    cache = TokenCache(ApproximateCounter())
    tight = _session(20, [150], [1, 3], "You fix bugs. " * 600)
    roomy = _session(100, [40], [1], "You fix bugs. " * 20)
    assert set(await _compare(tight, CONFIGS["ctxlab"], 9_000, cache)) == {"alone"}
    assert set(await _compare(roomy, CONFIGS["ctxlab"], 20_000, cache)) == {"cached"}


@pytest.mark.parametrize("system", ["", "You fix bugs. " * 20])
async def test_the_unrecorded_part_is_billed_in_every_request_and_cached_summary_call(
    system: str,
) -> None:
    """A recording whose harness sent 18,800 tokens a request that its file does not hold
    (Claude Code's System prompt and tools: no System nor tools in the file, or some): every
    reasoning request and every summary call in its cached form (the last request again) sends
    them first, the span alone does not — each billed here to the token and the dollar. A
    summary call priced without them came to 1,211 tokens where 20,011 were sent."""
    cache = TokenCache(ApproximateCounter())
    unrecorded = 18_800
    transcript = _session(60, [40], [1], system)
    forms, run = await _compared(transcript, CONFIGS["ctxlab"], 30_000, cache, unrecorded)
    calls = [c for c in run.costs if c.purpose == "summary"]
    assert len(calls) == len(forms) >= 8
    cached = [c for c, form in zip(calls, forms, strict=True) if form == "cached"]
    assert len(cached) >= 7
    # The cached form reads the prefix the request before it wrote, the unrecorded part first.
    assert all(c.input_tokens > unrecorded and c.cache_read > unrecorded for c in cached)
    assert all(
        c.input_tokens < unrecorded for c, f in zip(calls, forms, strict=True) if f != "cached"
    )


async def test_the_controls_differ() -> None:
    """Without the look-back, or pricing every summary call cached, the bill changes: the
    comparison above can fail."""
    cache = TokenCache(ApproximateCounter())
    wide = _session(12, [60], [14, 1], "You fix bugs. " * 200)  # 29-block turns
    truth, _ = await independent_bill(wide, CONFIGS["ctxlab"], 200_000, cache)
    loose, _ = await independent_bill(wide, CONFIGS["ctxlab"], 200_000, cache, lookback=None)
    assert sum(b.dollars for b in loose) < sum(b.dollars for b in truth) * 0.9
    tight = _session(20, [150], [1, 3], "You fix bugs. " * 600)
    truth, forms = await independent_bill(tight, CONFIGS["ctxlab"], 9_000, cache)
    assert "alone" in forms
    naive, _ = await independent_bill(tight, CONFIGS["ctxlab"], 9_000, cache, always_cached=True)
    assert _bills(naive) != _bills(truth)


async def _compare_references(
    transcript: Transcript, window: int, cache: TokenCache
) -> tuple[float, float]:
    """The what-if's two references (drop the oldest turns to fit; never compact) against the
    independent bill of the same requests; their costs."""
    what = WhatIf(
        transcript,
        {"c": CONFIGS["ctxlab"]},
        context_window=window,
        counter=cache,
        price=BILLED_PRICE,
        rules=BILLED_RULES,
    )
    await what.run()
    first = what.runs["c"].steps[0]
    items = first.manifest.items
    tools = [i for i in items if i.placement == "tools"]
    system = [i for i in items if i.placement == "system"]
    fixed = (
        tuple(f"fixed/{n}" for n in range(len(tools) + len(system))),
        tuple(i.tokens for i in (*tools, *system)),
    )
    request = ModelRequest(system=transcript.system, messages=(), tools=tuple(transcript.tools))
    assert len(request.tools) == len(tools)
    by_hash = {m.content_hash: m for m in transcript.messages}
    totals = []
    for costs, cap in ((what.baseline, first.manifest.input_limit), (what.no_compaction, None)):
        shapes = reference_shapes(
            transcript.messages, cache, fixed, first.manifest.input_limit, cap
        ).shapes
        requests = [
            (
                reference_blocks(
                    s.keys, s.tokens, s.fixed or len(fixed[0]), request, by_hash, cache
                ),
                s.output_tokens,
            )
            for s in shapes
        ]
        bills = bill(requests, input_price=what.price.input, output_price=what.price.output)
        assert _as_tuples(costs) == _bills(bills)
        totals.append(sum(b.dollars for b in bills))
        assert sum(c.cost for c in costs) == pytest.approx(totals[-1], rel=1e-9)
    return totals[0], totals[1]


async def test_the_references_are_billed_as_sent() -> None:
    cache = TokenCache(ApproximateCounter())
    for transcript, window in (
        (_session(20, [150], [1, 3], "You fix bugs. " * 600), 9_000),
        (_session(12, [60], [14, 1], "You fix bugs. " * 200), 9_000),
    ):
        await _compare_references(transcript, window, cache)


@requires_corpus
@pytest.mark.parametrize("window", [32_000, 16_000])
async def test_corpus_sessions_are_billed_as_sent(window: int) -> None:
    """The longest sessions of the corpus (those that compact at these windows)."""
    from ctxlab import TiktokenCounter

    paths = sorted(corpus_files(), key=lambda p: p.stat().st_size)[-3:]
    forms: list[str] = []
    for path in paths:
        cache = TokenCache(TiktokenCounter())
        transcript = load_transcript(path)
        forms += await _compare(transcript, CONFIGS["ctxlab"], window, cache)
        await _compare_references(transcript, window, cache)
    assert forms  # summary calls were met
