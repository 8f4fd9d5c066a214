"""Replay: run the pipeline over a recorded session, step by step, without calling a model.

A recorded conversation is fed as a live session would be: at every reasoning boundary (before
each assistant message) the pipeline prepares a request from the committed working state plus the
messages that arrived since, and its candidate state is committed. Swap the config to see how
another setting would have budgeted the same work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._budget import checked_budget
from ctxlab.analysis._model_summaries import metered_summarizer
from ctxlab.analysis._replay_requests import (
    checked_unrecorded,
    count_ahead,
    deferred_grade,
    idle_orders,
    with_unrecorded,
)
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.config._config import ContextConfig, named_configs
from ctxlab.exceptions import PreparationError, UsageError
from ctxlab.manifest import STEP_COLUMNS, ContextManifest, StepRow, step_row
from ctxlab.materials import Materials, SystemPart, Unrecorded
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import WorkingState
from ctxlab.models import Model
from ctxlab.pipeline import (
    CompactionOrder,
    Offloader,
    Preparation,
    PreparationMemo,
    Summarizer,
    extractive_summarizer,
    prepare,
)
from ctxlab.pipeline._compaction import CompactionRecord
from ctxlab.pipeline._on_demand import OnDemandAsker, on_demand_asker
from ctxlab.retention import UserLines, retention_columns
from ctxlab.tokens import TokenCache, TokenCounter
from ctxlab.util._checks import context_window as context_window_of
from ctxlab.util._checks import instance_of, sequence_of, shown
from ctxlab.util._records import filled

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReplayStep", "compare_configs", "replay", "replay_row"]


@dataclass(frozen=True)
class ReplayStep:
    """One prepared request of a replay."""

    index: int
    """Index of the assistant message this request produced in the recording (a message index,
    not a request number: print `number` for that)."""
    manifest: ContextManifest
    compaction: CompactionRecord | None
    state: WorkingState
    number: int = 0
    """This request's number in the replay, from 0: the plot's x, the step tables' ``step``."""
    request: ModelRequest | None = field(default=None, repr=False, compare=False)
    """The request as prepared (what a model would be sent): the Lab's panels show it. A
    what-if keeps its steps without it (the manifest and state say what it held)."""
    asked: str | None = None
    """The on-demand rule that asked for this request's compaction (``task``, ``requests``,
    ``tokens``, ``idle``: `ctxlab.config.OnDemandCompaction`), None when none asked."""


async def replay(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    context_window: int,
    counter: TokenCounter | TokenCache,
    config: ContextConfig | None = None,
    system: str = "",
    summarizer: Summarizer | Model | None = extractive_summarizer,
    materials: Materials | None = None,
    max_output_tokens: int | None = None,
    tools: Sequence[ToolSchema] = (),
    unrecorded: UnrecordedPart | Unrecorded | int | None = None,
    offloader: Offloader | None = None,
    grade: bool = True,
    after: ReplayStep | None = None,
    times: Mapping[int, float] | None = None,
    lifetime: float | None = None,
    budget_usd: float | None = None,
) -> AsyncIterator[ReplayStep]:
    """Prepare a request at every reasoning boundary of ``messages``, committing as an agent would.

    ``summarizer`` writes each compaction's summary: ctxlab's offline extract by default, a
    function, or your `Model` — metered, under ``budget_usd`` (refused with `OverBudget`
    before any call when an offline pass's summary requests, priced at the model's price,
    pass the cap; no call sent once it is reached: see `ctxlab.analysis._model_summaries`).

    ``max_output_tokens`` is the response size the recorded agent asked for (it reserves room
    when larger than the budget policy's reservation); ``tools`` are its tool schemas (counted
    in every request, as the recorded agent's were: a transcript's ``tools``); ``unrecorded``
    is what each recorded request held that the recording does not (`ctxlab.unrecorded_part`:
    the size of its model's; a number: tokens a request, as stated), counted in every request
    against the window and the trigger, and priced as the cached prefix it is; ``offloader``
    stores what truncation and eviction take out, as an agent's workspace would (without one,
    a cut result says it was cut and names no file). Each compaction's retention is graded when
    it is first read (``step.compaction.retention``; a replay that no one grades costs no
    grading); ``grade`` False gives no grader (``retention`` None) for the caller to grade with
    `ctxlab.analysis._grading.graded_steps` (the same figures). ``after`` resumes a replay of
    the same messages after that step of it (its committed state and manifest), yielding the
    steps that follow; they are the steps a replay from the start yields when every step up to
    ``after`` is as this config prepares it (`ctxlab.analysis._resume` decides when).

    Yields one `ReplayStep` per assistant message after the first user message (assistant
    messages before it cannot be requested: no request may start with one). Raises the first
    `PreparationError`.
    """
    # Long by its signature and docstring (the public API); the body checks the arguments in
    # order (their errors are documented) and hands the loop to `_steps`.
    context_window = context_window_of(context_window)
    messages = _checked(messages, system, materials, after)
    cap = checked_budget(budget_usd)
    if isinstance(summarizer, Model):

        def offline(extract: Summarizer) -> AsyncIterator[ReplayStep]:
            # The pass that sizes the model's summary requests: this replay with the offline
            # extract for summaries, ungraded.
            return replay(
                messages,
                context_window=context_window,
                counter=counter,
                config=config,
                system=system,
                summarizer=extract,
                materials=materials,
                max_output_tokens=max_output_tokens,
                tools=tools,
                unrecorded=unrecorded,
                grade=False,
                after=after,
                times=times,
                lifetime=lifetime,
            )

        summarizer = await metered_summarizer(summarizer, cap, offline, _cache(counter))
    elif cap is not None:
        msg = "budget_usd caps a summarizer model's calls: pass summarizer=<your Model> too"
        raise UsageError(msg)
    part = checked_unrecorded(unrecorded)
    if materials is None:
        materials = Materials(system=(SystemPart("system_prompt", system),) if system else ())
    # One cache and one memo for the whole replay: each step pays only for what is new.
    cache = _cache(counter)
    start = count_ahead(messages, cache)
    idle = idle_orders(messages, config, context_window, max_output_tokens, times, lifetime)
    settings = _Settings(
        context_window, cache, config, summarizer, max_output_tokens, tools, offloader, idle, grade
    )
    # Compaction on demand: the application's rules, asked before each request (issue 56).
    settings = dataclasses.replace(settings, asker=on_demand_asker(config, times))
    async for step in _steps(messages, settings, materials, part, start, after):
        yield step


def _cache(counter: TokenCounter | TokenCache) -> TokenCache:
    """``counter`` as a `TokenCache` (itself when it is one, so its counts are shared)."""
    return counter if isinstance(counter, TokenCache) else TokenCache(counter)


@dataclass(frozen=True)
class _Settings:
    """What every step of one replay prepares with (`replay`'s arguments, checked)."""

    context_window: int
    cache: TokenCache
    config: ContextConfig | None
    summarizer: Summarizer | None
    max_output_tokens: int | None
    tools: Sequence[ToolSchema]
    offloader: Offloader | None
    idle: Mapping[int, CompactionOrder]
    """The idle compactions ordered, by reply index (`idle_orders`)."""
    grade: bool
    memo: PreparationMemo = field(default_factory=PreparationMemo)
    asker: OnDemandAsker | None = None
    """The application's on-demand rules along this replay (`on_demand_asker`), if any."""


async def _steps(
    messages: Sequence[UserMessage | AssistantMessage],
    settings: _Settings,
    materials: Materials,
    unrecorded: UnrecordedPart | Unrecorded | None,
    start: int,
    after: ReplayStep | None,
) -> AsyncIterator[ReplayStep]:
    """`replay`'s loop: one step at each assistant message, from ``start`` (the first request's
    first message) or after ``after``."""
    state = after.state if after is not None else WorkingState()
    # The previous step's assistant message and the user messages since: appended in one go.
    pending: list[UserMessage | AssistantMessage] = []
    previous: ContextManifest | None = None
    requests, first = 0, start
    if after is not None:
        # The reply ``after`` answered is appended before the next request, as in a replay
        # from the start; a fresh memo gives the same requests (it only saves work).
        pending, previous, requests, first = (
            [messages[after.index]],
            after.manifest,
            after.number + 1,
            after.index + 1,
        )
    reader = UserLines()  # the user's lines, read once along the replay for every compaction
    for index in range(first, len(messages)):
        message = messages[index]
        if isinstance(message, UserMessage):
            pending.append(message)
            continue
        if pending:
            state = state.append(*pending)
        materials = with_unrecorded(materials, unrecorded, index)
        asked, order = _asked(settings, index, pending, previous)
        pending = []
        prep = await _prepared(state, settings, materials, previous, index, order)
        previous = prep.manifest
        if settings.asker is not None:
            settings.asker.sent(index, prep.manifest.estimated_input_tokens, bool(prep.compaction))
        record = prep.compaction
        if record is not None and settings.grade:
            grade = deferred_grade(messages, start, index, state, prep.state, reader)
            record = record.graded_later(grade)
        state = prep.state
        yield _step(index, prep, record, requests, asked)
        requests += 1
        pending.append(message)


def _step(
    index: int, prep: Preparation, record: CompactionRecord | None, number: int, asked: str | None
) -> ReplayStep:
    """The step of reply ``index`` (request ``number``), prepared as ``prep``, with ``record``
    (its graded compaction) and ``asked`` (`_asked`): every field, built at every step
    (`filled`)."""
    values = {
        "index": index,
        "manifest": prep.manifest,
        "compaction": record,
        "state": prep.state,
        "number": number,
        "request": prep.request,
        "asked": asked,
    }
    return filled(ReplayStep, values)


async def _prepared(
    state: WorkingState,
    settings: _Settings,
    materials: Materials,
    previous: ContextManifest | None,
    index: int,
    order: CompactionOrder | None,
) -> Preparation:
    """The request at reply ``index``, prepared from ``state`` as `replay`'s settings say
    (``order``: how it compacts, `_asked`)."""
    return await prepare(
        state,
        context_window=settings.context_window,
        counter=settings.cache,
        config=settings.config,
        materials=materials,
        summarizer=settings.summarizer,
        previous=previous,
        request_id=f"step-{index}",
        memo=settings.memo,
        max_output_tokens=settings.max_output_tokens,
        tools=settings.tools,
        offloader=settings.offloader,
        compaction=order,
    )


def _asked(
    settings: _Settings,
    index: int,
    arrived: Sequence[UserMessage | AssistantMessage],
    previous: ContextManifest | None,
) -> tuple[str | None, CompactionOrder | None]:
    """Whether the on-demand rules ask before the request at reply ``index`` (``arrived``:
    the messages since the last request), and the request's compaction order."""
    asker, idle = settings.asker, settings.idle.get(index)
    if asker is None:
        return None, idle
    if asker.last_input is None and previous is not None:
        # Resumed after a step (``after``): the application knows that request's size.
        asker.last_input = previous.estimated_input_tokens
    rule = asker.ask(index, arrived)
    return rule, asker.order(rule, idle)


def _checked(
    messages: object, system: object, materials: object, after: object
) -> tuple[UserMessage | AssistantMessage, ...]:
    # What `replay` takes besides its numbers, checked before the first step.
    if not isinstance(system, str):
        msg = f"system must be the System prompt's text, got {shown(system)}"
        raise UsageError(msg)
    if materials is not None:
        instance_of(materials, Materials, "materials", "Materials or None")
    if after is not None:
        instance_of(after, ReplayStep, "after", "a step of a replay of these messages, or None")
    return sequence_of(messages, MESSAGE_TYPES, "messages", MESSAGES_EXAMPLE)


MESSAGE_TYPES = (UserMessage, AssistantMessage)
MESSAGES_EXAMPLE = "a list of UserMessage and AssistantMessage (a transcript's messages)"


def replay_row(step: ReplayStep, number: int) -> StepRow:
    """The step table's row (`step_row`) of replayed request ``number``, with the compaction it
    made and that compaction's retention."""
    record = step.compaction
    kept = retention_columns(record)
    return step_row(
        step.manifest,
        step=number,
        compaction=record.method if record else None,
        compacted_messages=record.messages_compacted if record else 0,
        retention=kept["retention"],
        retention_control=kept["retention_control"],
    )


async def compare_configs(
    messages: Sequence[UserMessage | AssistantMessage],
    configs: Mapping[str, ContextConfig],
    *,
    context_window: int,
    counter: TokenCounter | TokenCache,
    system: str = "",
    summarizer: Summarizer | None = extractive_summarizer,
    max_output_tokens: int | None = None,
    tools: Sequence[ToolSchema] = (),
    unrecorded: UnrecordedPart | Unrecorded | int | None = None,
) -> pd.DataFrame:
    """Replay ``messages`` under each named config; one row per (config, step), side by side
    (``unrecorded``: what the recording does not hold of each request, as in `replay`). Every
    config is counted through one `TokenCache` (``counter``, wrapped once when it is not one): a
    message the configs share is tokenized once.

    Columns: ``config``, ``index`` (the assistant message the request produced), then the step
    table's (`STEP_COLUMNS`, the Lab's own): tokens by placement, ``total``, the lines,
    ``validation``, transforms counted by effect, ``compaction`` (``summary``/``truncation`` or
    empty) and ``compacted_messages``. A preparation that fails stops that config's replay with a
    last row whose ``validation`` says why.
    """
    import pandas as pd

    if isinstance(configs, Mapping) and not configs:
        msg = "pass at least one named config, e.g. {'default': ContextConfig()}"
        raise UsageError(msg)
    rows: list[dict[str, Any]] = []
    # One cache for every config: each message is counted once, not once per config (the
    # same counts; a `TokenCache` passed in is used as it is).
    cache = _cache(counter)
    for name, config in named_configs(configs, validate=False).items():
        step = 0
        try:
            async for replayed in replay(
                messages,
                context_window=context_window,
                counter=cache,
                config=config,
                system=system,
                summarizer=summarizer,
                max_output_tokens=max_output_tokens,
                tools=tools,
                unrecorded=unrecorded,
            ):
                entry = replay_row(replayed, step)
                rows.append({"config": name, "index": replayed.index, **entry})
                step += 1
        except PreparationError as exc:
            if exc.manifest is not None:
                rows.append({"config": name, "index": -1, **step_row(exc.manifest, step=step)})
    return pd.DataFrame(rows, columns=["config", "index", *STEP_COLUMNS])
