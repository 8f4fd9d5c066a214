"""The feasible baseline as docs/concepts/cost.md states it, rebuilt by an outsider
(`tests.analysis.outsider_baseline`: that page alone, no code of ``ctxlab/analysis``), agrees with
ctxlab's: request by request on generated sessions (leads, cut turns, a fixed part that changes,
turns of many blocks, every provider's cache), and per session on the recorded Claude Code fixture
and the corpus — its request count, ``over_limit``, input tokens and cost. The control, a rule
dropping the newest turns first, does not."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig, WhatIf, load
from ctxlab.analysis._cost import CacheRules, Price, request_costs
from ctxlab.analysis._prices import LongContext
from ctxlab.analysis._references import reference_shapes
from ctxlab.io._transcript import load_transcript
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.analysis.baseline_agreement import agreement, caching, tariff
from tests.analysis.outsider_baseline import Part, outsider_baseline
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import Message
from tests.strategies import SETTINGS

FIXTURE = Path(__file__).parent.parent / "fixtures" / "claude_code"
RECORDED = FIXTURE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SUBSET = (
    "claude_code__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude_code__4d5611e5_agent-a2898e3.jsonl",
    "mini_swe_agent__django__django-15629.jsonl",
    "swe_agent__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__"
    "pydicom__pydicom-1458.jsonl",
    "tau_bench__gpt-4o-airline_task9_trial0.jsonl",
)
"""Corpus sessions of every harness (by name under ``$CTXLAB_CORPUS/norm``): two Claude Code
(the subagent's turns cut at 16k and 32k), mini-SWE-agent (a System; it drops turns at 16k and
32k), SWE-agent (tools; it drops at 16k), tau-bench (OpenAI's cache; it never drops)."""


def _text(size: int) -> str:
    return "x " * size


@st.composite
def sessions(draw: st.DrawFn) -> list[Message]:
    """A session: perhaps replies a recording opens with, the task, perhaps a lead, then turns
    of 0 to 3 calls (0: a text reply) or 9 to 11 (about the look-back's 20 blocks) followed by
    0 to 2 user messages — the calls' results, a new prompt — of any size."""
    messages: list[Message] = []
    if draw(st.booleans()):
        call = ToolUseBlock(id="before", name="bash", input={})
        messages += [
            AssistantMessage(content=(call,)),
            UserMessage(content=(ToolResultBlock(tool_use_id="before", content="ok"),)),
        ]
    messages.append(UserMessage(content=_text(draw(st.integers(1, 900)))))
    if draw(st.booleans()):
        messages.append(UserMessage(content=_text(draw(st.integers(1, 900)))))
    for turn in range(draw(st.integers(1, 14))):
        # 10 calls and their results are 21 blocks: just past the look-back.
        calls = draw(st.sampled_from([0, 1, 1, 2, 3]) | st.integers(9, 11))
        uses = tuple(
            ToolUseBlock(id=f"c{turn}_{n}", name="read", input={"n": n}) for n in range(calls)
        )
        thought = (TextBlock(text=_text(draw(st.integers(1, 300)))),)
        messages.append(AssistantMessage(content=thought + uses))
        for follow in range(draw(st.integers(0, 2))):
            if uses and follow == 0:
                size = draw(st.integers(1, 1_500)) // len(uses) + 1  # the results' share
                results = tuple(
                    ToolResultBlock(tool_use_id=u.id, content=_text(size)) for u in uses
                )
                messages.append(UserMessage(content=results))
            else:
                messages.append(UserMessage(content=_text(draw(st.integers(1, 400)))))
    messages.append(AssistantMessage(content="Done."))
    return messages


PRICE = Price(3.0, 15.0, 3.75, 0.3, 6.0, LongContext(6_000, Price(6.0, 22.5, 7.5, 0.6, 12.0)))
RULES = st.sampled_from(
    [
        CacheRules.anthropic(),
        CacheRules.anthropic(min_tokens=200),
        CacheRules.anthropic(min_tokens=200, ttl="1h"),
        CacheRules.openai(),
        CacheRules.openai(bills_writes=True),
        CacheRules.google(min_tokens=300),
        CacheRules.none(),
    ]
)


@st.composite
def clocks(draw: st.DrawFn, messages: list[Message]) -> dict[int, float]:
    """A reply's time after the one before: seconds later, past a lifetime, earlier (out of
    order), the same, or none."""
    times: dict[int, float] = {}
    now = 1.7e9
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        now += draw(st.sampled_from([0.0, 4.0, 20.0, 45.0, 400.0, 4_000.0, -30.0]))
        if draw(st.integers(0, 9)):
            times[index] = now
    return times


@SETTINGS
@given(
    messages=sessions(),
    limit=st.integers(200, 12_000),
    fixed=st.lists(st.integers(1, 2_500), min_size=0, max_size=3),
    switch=st.integers(0, 40),
    rules=RULES,
    clock=st.data(),
    lifetime=st.sampled_from([None, 30.0, 300.0]),
    write_ttl=st.sampled_from([None, "5m", "1h"]),
)
def test_the_outsider_agrees_request_by_request_on_generated_sessions(
    messages: list[Message],
    limit: int,
    fixed: list[int],
    switch: int,
    rules: CacheRules,
    clock: st.DataObject,
    lifetime: float | None,
    write_ttl: Literal["5m", "1h"] | None,
) -> None:
    cache = TokenCache(ApproximateCounter())
    # On a clock half of the time: gaps within and past the cache's lifetime, a 1-hour TTL.
    times = clock.draw(clocks(messages)) if clock.draw(st.booleans()) else {}
    rules = dataclasses.replace(rules, lifetime=lifetime)

    # A fixed part that changes at a reply (another model's unrecorded part): room may shrink
    # or grow again.
    def sizes(reply: int) -> list[int]:
        return fixed if reply < switch else [max(s // 3, 1) for s in fixed]

    def ours(reply: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        own = sizes(reply)
        return tuple(f"f{n}/{s}" for n, s in enumerate(own)), tuple(own)

    def theirs(reply: int) -> tuple[Part, ...]:
        return tuple(Part(f"f{n}/{s}", s) for n, s in enumerate(sizes(reply)))

    found = reference_shapes(messages, cache, ours, limit, limit, times, write_ttl)
    costs = request_costs(found.shapes, PRICE, rules)
    outsider = outsider_baseline(
        messages, cache, theirs, limit, tariff(PRICE), caching(rules, write_ttl), times=times
    )
    assert len(outsider.requests) == len(costs)
    assert outsider.over_limit == found.over_limit
    for request, billed, cost in zip(outsider.requests, outsider.bills, costs, strict=True):
        assert request.input == cost.input_tokens
        assert request.output == cost.output
        assert (billed.uncached, billed.written, billed.read) == (
            cost.uncached,
            cost.cache_write,
            cost.cache_read,
        )
        assert billed.dollars == pytest.approx(cost.cost, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("window", "over"), [(16_000, 20), (32_000, 16), (50_000, 0), (200_000, 0)]
)
def test_the_outsider_agrees_on_the_recorded_claude_code_fixture(window: int, over: int) -> None:
    # A recording with a bill: its unrecorded part is sized by model — 25,999 tokens for the
    # first five requests, 29,420 after — so at 16k every request is over the limit, and at
    # 32k (a limit of 27,360) the fifth is cut to fill it and the fifteen after are over.
    transcript = load(RECORDED)
    found = agreement(transcript, window)
    assert found.ctxlab == found.outsider
    assert found.ctxlab.requests == 20
    assert found.ctxlab.over_limit == over
    if window == 32_000:
        what = WhatIf(transcript, {"default": ContextConfig()}, context_window=window)
        assert [c.input_tokens for c in what.baseline][4] == 27_360


SONNET = Price(3.0, 15.0, 3.75, 0.3, 6.0)


@requires_corpus
@pytest.mark.parametrize("window", [16_000, 32_000, 200_000])
def test_the_outsider_agrees_on_corpus_sessions(window: int) -> None:
    """Each figure within 0.5 % on every session of the subset — in fact to the token and to
    1e-9 of the dollars — at the recording's price, and at Sonnet's under Anthropic's rules
    (a SWE-agent session names no model: unpriced)."""
    for path in _subset():
        transcript = load_transcript(path)
        for found in (
            agreement(transcript, window),
            agreement(transcript, window, price=SONNET, rules=CacheRules.anthropic()),
        ):
            assert found.worst <= 0.005, (path.name, found)
            assert found.ctxlab.input_tokens == found.outsider.input_tokens
            assert found.ctxlab.over_limit == found.outsider.over_limit
            assert math.isnan(found.ctxlab.cost) or found.ctxlab.cost == pytest.approx(
                found.outsider.cost, rel=1e-9
            )
        # The subset is priced (but for the SWE-agent session) and spends real dollars.
        assert math.isnan(found.ctxlab.cost) is False


@requires_corpus
@pytest.mark.parametrize("window", [16_000, 32_000])
def test_the_control_dropping_the_newest_turns_first_disagrees(window: int) -> None:
    """Where the baseline drops turns at all — four sessions of the subset at 16k, three at
    32k — a rule that drops the newest turns before the latest first gives figures more than
    2 % apart."""
    dropping = 0
    for path in _subset():
        transcript = load_transcript(path)
        whole = agreement(transcript, 10**7)  # nothing dropped: every message in every request
        found = agreement(transcript, window, "newest")
        if found.ctxlab.input_tokens == whole.ctxlab.input_tokens:
            continue
        dropping += 1
        assert found.worst > 0.02, (path.name, found)
    assert dropping == {16_000: 4, 32_000: 3}[window]


def _subset() -> list[Path]:
    names = {p.name: p for p in corpus_files()}
    missing = [n for n in SUBSET if n not in names]
    if missing:
        pytest.skip(f"the corpus lacks {missing}")
    return [names[n] for n in SUBSET]


def test_a_drop_rewrites_all_but_the_fixed_part_and_the_task_in_dollars() -> None:
    # The page's consequence, worked by hand: the fixed part (2,000 tokens) and the task are
    # read from the cache at every request; a request that drops nothing reads the request
    # before it whole and writes what follows; the one that drops the first turn writes every
    # turn it sends again.
    cache = TokenCache(ApproximateCounter())
    messages: list[Message] = [UserMessage(content="Fix the bug. " * 40)]
    for n in range(3):
        call = ToolUseBlock(id=f"c{n}", name="read", input={"n": n})
        messages.append(AssistantMessage(content=(call,)))
        result = ToolResultBlock(tool_use_id=f"c{n}", content=f"line {n} " * 300)
        messages.append(UserMessage(content=(result,)))
    messages.append(AssistantMessage(content="Fixed."))
    task, a1, r1, a2, r2, a3, r3, done = (cache.message(m) for m in messages)
    fixed = 2_000
    # Room for every turn but one at the last request.
    limit = fixed + task + a2 + r2 + a3 + r3 + a1
    found = reference_shapes(messages, cache, (("fixed",), (fixed,)), limit, limit)
    costs = request_costs(found.shapes, SONNET, CacheRules.anthropic())
    head = fixed + task
    assert [(c.uncached, c.cache_write, c.cache_read) for c in costs] == [
        (0, head, 0),
        (0, a1 + r1, head),
        (0, a2 + r2, head + a1 + r1),
        (0, a2 + r2 + a3 + r3, head),  # the first turn dropped: the rest written again
    ]
    outputs = (a1, a2, a3, done)
    expected = [
        (write * 3.75 + read * 0.3 + out * 15.0) / 1e6
        for (write, read), out in zip(
            [(head, 0), (a1 + r1, head), (a2 + r2, head + a1 + r1), (a2 + r2 + a3 + r3, head)],
            outputs,
            strict=True,
        )
    ]
    assert [c.cost for c in costs] == pytest.approx(expected, rel=1e-12)
    assert found.over_limit == 0


@pytest.mark.parametrize("window", [32_000, 200_000])
def test_the_outsider_agrees_on_the_recorded_clock(window: int) -> None:
    # The fixture's replies are 2 to 40 seconds apart: under a 5-second lifetime most of its
    # cached prefixes expire between requests, and the baseline pays the re-writes — the
    # outsider's clock prices them alike.
    transcript = load(RECORDED)
    assert len(transcript.times) == 20
    rules = CacheRules.anthropic(min_tokens=4_096)
    short = agreement(transcript, window, rules=dataclasses.replace(rules, lifetime=5.0))
    forever = agreement(transcript, window, rules=dataclasses.replace(rules, lifetime=None))
    assert short.ctxlab == short.outsider
    assert forever.ctxlab == forever.outsider
    assert short.ctxlab.cost > 2 * forever.ctxlab.cost  # $2.19 against $0.74 at 32k
