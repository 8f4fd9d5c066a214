"""Compaction on demand (`OnDemandCompaction`, issue 56 item 1): a replay compacts before the
requests the application's rules pick — a new task, a count of requests, a token mark read from
the last request, a pause — and only there; the requests after it carry the summary in place of
what it summarizes. Where each rule fires is computed here from the messages and from a replay
that never compacts, not from the asker."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from pydantic import ValidationError

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._replay import ReplayStep
from ctxlab.config._on_demand import OnDemandCompaction
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from tests.helpers import replayed

WINDOW = 200_000  # the trigger (160,000) is never reached: only the rules compact
TASKS = ("Fix the parser.", "Now fix the printer.", "Last, fix the docs.")


def tasks(calls: int = 5) -> Transcript:
    """Three tasks the user gives in turn, each a loop of ``calls`` tool calls and a reply."""
    messages: list[UserMessage | AssistantMessage] = []
    for t, task in enumerate(TASKS):
        messages.append(UserMessage(content=task))
        for n in range(calls):
            use = ToolUseBlock(id=f"c{t}_{n}", name="bash", input={"command": f"make t{t}{n}"})
            messages.append(AssistantMessage(content=(use,)))
            out = f"t{t}{n}: error at line {n * 7} of module_{t}.py\n" * 30
            result = ToolResultBlock(tool_use_id=f"c{t}_{n}", content=out)
            # A harness's reminder beside a result is not the user speaking.
            reminder = (TextBlock(text="<system-reminder>tests run</system-reminder>"),)
            messages.append(UserMessage(content=(result, *(reminder if n == 2 else ()))))
        messages.append(AssistantMessage(content=f"Done with task {t}."))
    meta = {"models": ["claude-sonnet-4-6"]}
    return Transcript(name="tasks", meta=meta, system="You fix code.", messages=tuple(messages))


def text(message: UserMessage | AssistantMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def config(**rules: object) -> ContextConfig:
    # (An ask keeps only what arrived: keep_messages no longer matters to it.)
    on_demand = OnDemandCompaction.model_validate(rules)
    return ContextConfig(on_demand=on_demand).merge(compaction={"keep_messages": 1})


async def steps(
    transcript: Transcript, cfg: ContextConfig, times: dict[int, float] | None = None
) -> list[ReplayStep]:
    return [s async for s in replayed(transcript, context_window=WINDOW, config=cfg, times=times)]


def compacted(run: list[ReplayStep]) -> list[int]:
    return [s.number for s in run if s.compaction is not None]


async def test_at_a_new_task_the_summary_replaces_the_tasks_before() -> None:
    transcript = tasks()
    messages = transcript.messages
    # The first request after each of the later tasks' prompts, by reply index.
    prompts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage) and text(m) in TASKS]
    expected = [
        next(j for j in range(p, len(messages)) if messages[j].role == "assistant")
        for p in prompts[1:]
    ]
    run = await steps(transcript, config(at_task=True))
    assert [s.index for s in run if s.compaction is not None] == expected
    assert [s.index for s in run if s.asked == "task"] == expected
    first = next(s for s in run if s.compaction is not None)
    # As the documented shape has it: the conversation so far, the previous task's last reply
    # included, went to be summarized; the request holds the summary and the new prompt alone.
    assert first.compaction is not None
    assert first.compaction.messages_compacted == prompts[1]
    kept = first.state.conversation
    assert [text(m) for m in kept] == [TASKS[1]]
    assert first.state.summary is not None
    assert first.manifest.totals.get("summary", 0) > 0
    # The next request carries the summary and the new task's work, never task 0's calls.
    after = run[first.number + 1]
    ids = {b.id for m in after.state.conversation for b in m.content if hasattr(b, "id")}
    assert not any(i.startswith("c0_") for i in ids)


async def test_without_a_rule_nothing_compacts_below_the_trigger() -> None:
    run = await steps(tasks(), ContextConfig())
    assert compacted(run) == []
    assert all(s.asked is None for s in run)


async def test_every_n_requests_counts_from_the_last_compaction() -> None:
    run = await steps(tasks(), config(every_requests=4))
    # Requests 0–3 are sent; request 4 is the fourth since the start; then every fourth after.
    assert compacted(run) == list(range(4, len(run), 4))
    assert {s.asked for s in run if s.compaction} == {"requests"}


async def test_on_demand_keeps_what_arrived_not_the_reserves_tail() -> None:
    # Under the default config (a reserve of 20,000 tokens at this window would keep the whole
    # task) an ask summarizes everything sent so far: the request holds the summary, then, mid
    # task, the latest call and its result (a result never travels without its call).
    cfg = ContextConfig(on_demand=OnDemandCompaction(every_requests=4))
    run = await steps(tasks(), cfg)
    first = next(s for s in run if s.compaction is not None)
    kept = first.state.conversation
    assert len(kept) == 2 and isinstance(kept[0], AssistantMessage)
    (use,) = kept[0].content
    assert isinstance(use, ToolUseBlock) and [r.tool_use_id for r in kept[1].tool_results] == [
        use.id
    ]
    # Every message before the reply it stands for is either summarized or kept.
    assert first.compaction is not None
    assert first.compaction.messages_compacted + len(kept) == first.index
    # The control: the same rule as a threshold would keep the reserve's tail, more than that.
    plain = await steps(
        tasks(), ContextConfig(trigger_ratio=0.02, reserve_ratio=0.01, context_buffer_ratio=0)
    )
    tail = next(s for s in plain if s.compaction is not None).state.conversation
    assert len(tail) > 2


async def test_the_token_mark_is_read_from_the_last_request() -> None:
    transcript = tasks()
    sizes = [s.manifest.estimated_input_tokens for s in await steps(transcript, ContextConfig())]
    mark = sizes[6]
    # The application reads the last response's usage: it asks at the request after the first
    # one that reached the mark — one request later than a threshold at the same mark fires.
    reached = next(n for n, size in enumerate(sizes) if size >= mark)
    run = await steps(transcript, config(at_tokens=mark))
    assert compacted(run)[0] == reached + 1
    assert run[reached + 1].asked == "tokens"


async def test_a_mark_below_what_a_compaction_leaves_asks_once_not_at_every_request() -> None:
    transcript = tasks()
    mark = 400  # a compaction here leaves a summary and a tail of 430-500 tokens
    run = await steps(transcript, config(at_tokens=mark))
    numbers = compacted(run)
    sizes = [s.manifest.estimated_input_tokens for s in run]
    # After a compaction that left the request at or above the mark, the mark asks again only
    # once a request fell below it.
    for first, second in itertools.pairwise(numbers):
        if sizes[first] >= mark:
            assert any(size < mark for size in sizes[first : second - 1])
    assert numbers and len(numbers) < len(run) // 2


async def test_a_floor_keeps_a_small_context_from_being_summarized() -> None:
    transcript = tasks()
    sizes = [s.manifest.estimated_input_tokens for s in await steps(transcript, ContextConfig())]
    run = await steps(transcript, config(every_requests=2, min_tokens=sizes[9]))
    first = compacted(run)[0]
    # Asked only once the last request held the floor.
    assert sizes[first - 1] >= sizes[9] > sizes[first - 2]


async def test_a_pause_longer_than_the_rule_asks() -> None:
    transcript = tasks()
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    times = {index: 1_700_000_000.0 + 20.0 * n for n, index in enumerate(replies)}
    # A 10-minute pause before request 9.
    times = {i: t + (600.0 if n >= 9 else 0.0) for n, (i, t) in enumerate(times.items())}
    run = await steps(transcript, config(idle_seconds=300.0), times)
    assert compacted(run) == [9]
    assert run[9].asked == "idle"
    assert compacted(await steps(transcript, config(idle_seconds=300.0))) == []  # no clock


def test_a_policy_without_a_rule_is_refused_saying_which_rules_there_are() -> None:
    with pytest.raises(ValidationError, match="at_task=True, every_requests, at_tokens"):
        OnDemandCompaction()
    with pytest.raises(ValidationError, match="instructions is empty"):
        OnDemandCompaction(at_task=True, instructions="  ")


async def test_the_instructions_reach_the_summary_request() -> None:
    asked: list[str] = []

    async def summarizer(request):  # type: ignore[no-untyped-def]
        asked.append(request.instructions or "")
        return {name: "kept" for name in request.schema["properties"]}

    transcript = tasks()
    cfg = config(at_task=True, instructions="Keep every file name.")
    run = [
        s
        async for s in replayed(
            transcript, context_window=WINDOW, config=cfg, summarizer=summarizer, system=""
        )
    ]
    assert len(compacted(run)) == 2
    assert asked == ["Keep every file name."] * 2


def test_a_config_with_the_policy_round_trips() -> None:
    cfg = config(at_task=True, every_requests=10)
    again = ContextConfig.model_validate(cfg.model_dump())
    assert again == cfg
    assert dataclasses.is_dataclass(ReplayStep)


async def test_the_compaction_request_is_priced_as_sent_and_compared_with_the_threshold() -> None:
    transcript = tasks(8)
    configs = {"threshold": ContextConfig(), "on_demand": config(at_task=True)}
    what = WhatIf(transcript, configs, context_window=8_000, counter=ApproximateCounter())
    await what.run()
    run = what.runs["on_demand"]
    asked = [s.number for s in run.prepared if s.asked == "task"]
    assert asked == [s.number for s in run.prepared if s.compaction is not None]
    assert len(asked) == 2
    costs = run.costs
    positions = [n for n, c in enumerate(costs) if c.purpose == "summary"]
    # One compaction request before each request that compacted (in send order).
    assert positions == [number + i for i, number in enumerate(asked)]
    instruction = ApproximateCounter().count(ContextConfig().compression_prompt).tokens
    for n in positions:
        summary, before = costs[n], costs[n - 1]
        # The request reads the last request whole from the cache (the conversation as sent),
        # and writes what came since with the instruction after it.
        assert summary.cache_read == before.input_tokens
        assert summary.cache_write >= instruction
        assert summary.uncached == 0
        dollars = (
            summary.cache_read * 0.30 + summary.cache_write * 3.75 + summary.output * 15.0
        ) / 1e6
        assert summary.cost == pytest.approx(dollars)
    # The next request carries the summary in place of the conversation it summarizes.
    for number in asked:
        totals = run.prepared[number].manifest.totals
        assert totals["summary"] > 0
        assert run.prepared[number].manifest.estimated_input_tokens < (
            run.prepared[number - 1].manifest.estimated_input_tokens
        )
    table = what.table()
    for name in configs:
        assert table.loc[name, "cost"] == pytest.approx(sum(c.cost for c in what.runs[name].costs))


async def test_a_summary_written_in_the_background_is_swapped_in_behind() -> None:
    from ctxlab.analysis._background import background_staleness

    transcript = tasks()
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    times = {index: 1_700_000_000.0 + 20.0 * n for n, index in enumerate(replies)}
    run = await steps(transcript, config(at_task=True))
    baseline = await steps(transcript, ContextConfig())
    sizes = [s.manifest.estimated_input_tokens for s in baseline]
    stale = background_staleness(run, baseline, times, seconds=45.0)
    asked = compacted(run)
    assert [s.asked for s in stale] == asked
    for s in stale:
        # Requests 20 s apart: the first one at least 45 s after the ask is the third.
        assert s.swapped == s.asked + 3
        assert s.requests_behind == 3
        assert s.tokens_behind == sizes[s.asked + 3] - sizes[s.asked]
        assert s.tokens_behind > 0
    # Written in less time than the next request takes: one request behind.
    assert {s.requests_behind for s in background_staleness(run, baseline, times, 5.0)} == {1}
    # The session ends before a slow summary is ready: never swapped in.
    late = background_staleness(run, baseline, times, 10_000.0)
    assert all(s.swapped is None and s.tokens_behind is None for s in late)
