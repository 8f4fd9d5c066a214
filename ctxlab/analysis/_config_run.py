"""One config's replay of a session, as a what-if keeps it (`ConfigRun`), and `replay_run`,
which fills it: every request prepared, each compaction's summary calls built as the agent would
send them (`ctxlab.models.summary_call`: refused, never sent, when they fit neither way — the
pipeline then summarizes in smaller pieces, as it does for the agent).

Analysis is done on demand: a run's compactions are graded (`steps`) and its requests priced
(`costs`) the first time a figure asks for them, then kept — the prepared requests
(`prepared`, `manifests`), and what the plot and the headline figures read, never wait for the
grader or the pricer. A run replayed after another of the same session (a slider moved) reuses
the other's steps up to the first whose decision may differ (`ctxlab.analysis._resume`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.analysis._cost import CacheRules, Price, RequestCost, request_costs
from ctxlab.analysis._grading import graded_steps, next_use_of
from ctxlab.analysis._replay import ReplayStep, replay
from ctxlab.analysis._resume import reusable_steps
from ctxlab.analysis._shapes import SentSummary, priced_shapes
from ctxlab.analysis._summary_memo import SummaryMemo
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.config._config import ContextConfig, require_config
from ctxlab.exceptions import ContextOverflowError, PreparationError, UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import ContextManifest
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import summary_call, summary_manifest
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.retention._next_use import NextUse
from ctxlab.tokens import TokenCache
from ctxlab.util._gc import collector_paused

__all__ = [
    "ConfigRun",
    "SummaryCaller",
    "named_config",
    "replay_run",
]


SummaryCaller = Callable[[SummaryRequest, ModelRequest | None], Awaitable[Mapping[str, Any]]]
"""Writes a summary: the summary request, and the last request (its cached form) when the call
is sent in that form (`ctxlab.analysis._model_summaries.ModelSummaries`)."""


@dataclass(frozen=True)
class _Pricing:
    """What pricing a run needs besides its steps (kept until it is priced)."""

    messages: Sequence[UserMessage | AssistantMessage]
    cache: TokenCache
    price: Price
    rules: CacheRules
    priced_calls: bool
    times: Mapping[int, float] = field(default_factory=dict)
    """When each reply was recorded (trusted times, by message index): the requests' clock."""
    write_ttl: Literal["5m", "1h"] | None = None


@dataclass
class ConfigRun:
    """One config's replay of the session."""

    name: str
    config: ContextConfig
    prepared: list[ReplayStep] = field(default_factory=list)
    """The prepared requests, in order, as the replay made them: their compactions not yet
    graded (`steps` grades them)."""
    error: str | None = None
    """Why the replay stopped early, if it did."""
    seconds: float = 0.0
    """How long the replay took (grading and pricing, done on demand, are not in it)."""
    summary_requests: dict[int, list[tuple[SummaryRequest, dict[str, Any]]]] = field(
        default_factory=dict
    )
    """The summary requests each compacting step made (by step position), with their answers:
    one, or one per piece when the span did not fit a single request."""
    summary_calls: dict[int, list[SentSummary]] = field(default_factory=dict)
    """The summary calls each compacting step would send (by step position), as the agent
    sends them (the cached form when it fits, else the span alone): what is priced."""
    reused: int = 0
    """How many of the first steps were taken from an earlier replay of the session under
    another config (`ctxlab.analysis._resume`), not prepared again."""
    _pricing: _Pricing | None = field(default=None, repr=False, compare=False)
    _graded: list[ReplayStep] | None = field(default=None, repr=False, compare=False)
    _costs: list[RequestCost] | None = field(default=None, repr=False, compare=False)
    _next_use: tuple[str, list[NextUse]] | None = field(default=None, repr=False, compare=False)

    @property
    def steps(self) -> list[ReplayStep]:
        """The prepared requests with each compaction's retention graded (on the first read,
        then kept)."""
        if self._graded is None:
            if self._pricing is None or not any(s.compaction for s in self.prepared):
                self._graded = self.prepared
            else:
                self._graded = graded_steps(self.prepared, self._pricing.messages)
        return self._graded

    def next_uses(self, system: str = "") -> list[NextUse]:
        """Each compaction graded by what the recorded agent used next, against its request
        with ``system`` (`next_use_of`): on the first read, then kept — a what-if's table asks
        for every run's at each redraw, and only a run replayed since is graded again."""
        if self._next_use is None or self._next_use[0] != system:
            messages = self._pricing.messages if self._pricing is not None else ()
            self._next_use = system, next_use_of(self.prepared, messages, system)
        return self._next_use[1]

    @property
    def graded(self) -> bool:
        """Whether `steps` is computed (its retention figures are there to read)."""
        return self._graded is not None

    @property
    def costs(self) -> list[RequestCost]:
        """Reasoning requests and summary calls, in the order they would be sent, priced (on
        the first read, then kept)."""
        if self._costs is None:
            pricing = self._pricing
            if pricing is None:
                return []
            shapes = priced_shapes(
                self.prepared,
                self.summary_calls if pricing.priced_calls else {},
                pricing.messages,
                pricing.cache,
                pricing.times,
                pricing.write_ttl,
            )
            self._costs = request_costs(shapes, pricing.price, pricing.rules)
        return self._costs

    @property
    def sent(self) -> list[ContextManifest]:
        """Every request the run sends, in order — each compaction's summary calls before its
        request when they are priced — as `costs` prices them."""
        priced = self._pricing is not None and self._pricing.priced_calls
        calls = self.summary_calls if priced else {}
        return [
            m
            for position, step in enumerate(self.prepared)
            for m in (*(c.manifest for c in calls.get(position, ())), step.manifest)
        ]

    def step_costs(self) -> list[RequestCost]:
        """The cost of each step's own request, in step order (its summary calls apart)."""
        costs = self.costs
        pricing = self._pricing
        if pricing is None or not pricing.priced_calls:
            return costs[: len(self.prepared)]
        own: list[RequestCost] = []
        position = 0
        for index in range(len(self.prepared)):
            position += len(self.summary_calls.get(index, ()))
            own.append(costs[position])
            position += 1
        return own

    @property
    def priced(self) -> bool:
        """Whether `costs` is computed."""
        return self._costs is not None

    @property
    def manifests(self) -> list[ContextManifest]:
        """The prepared requests' manifests (graded or not: a manifest holds no retention)."""
        return [s.manifest for s in self.prepared]

    @property
    def cost(self) -> float:
        """USD over the session, summary calls included."""
        return sum(c.cost for c in self.costs)

    def __repr__(self) -> str:
        # A run holds every request it prepared: the dataclass repr would print them all (in a
        # notebook cell's output, and in Python 3.11's asyncio.run, which formats the result of
        # the task it ran — seconds for a 500-request run).
        compactions = sum(s.compaction is not None for s in self.prepared)
        state = f", error={self.error!r}" if self.error else ""
        cost = self.cost
        # NaN: a model no table prices (`Price.unknown`), never $nan nor $0.
        spent = f"${cost:.2f}" if cost == cost else "unpriced"
        return (
            f"ConfigRun({self.name!r}, {len(self.prepared)} requests, {compactions} compactions, "
            f"{spent}{state})"
        )


async def replay_run(
    run: ConfigRun,
    transcript: Transcript,
    *,
    context_window: int,
    cache: TokenCache,
    price: Price,
    rules: CacheRules,
    priced_calls: bool = True,
    unrecorded: UnrecordedPart | None = None,
    earlier: ConfigRun | None = None,
    times: Mapping[int, float] | None = None,
    write_ttl: Literal["5m", "1h"] | None = None,
    summarize: SummaryCaller | None = None,
    pace: Callable[[], Awaitable[None]] | None = None,
    summaries: SummaryMemo | None = None,
) -> None:
    """Replay ``transcript`` under ``run.config`` into ``run`` (its steps, summary requests and
    calls, error, time; its grading and pricing are set up, done when read); ``priced_calls``
    False prices no summary call (summaries made offline); ``unrecorded`` the part of every
    request the recording does not hold (`ctxlab.unrecorded_part`); ``earlier`` a run of the
    same session (same window, cache and unrecorded part) whose first steps this one may reuse
    (`reusable_steps`); ``times`` the recording's trusted times by reply (`RecordingClock`)
    and ``write_ttl`` its writes' TTL, the clock and TTL its requests are priced on;
    ``summarize`` writes the summaries (ctxlab's offline extract by default); ``pace`` is
    awaited after each step (a replay in the background gives the event loop back between
    steps, and is cancelled there); ``summaries`` keeps ctxlab's offline summaries by what they
    summarize, across the runs that share it (`SummaryMemo`)."""
    # Long by its docstring (every argument's meaning); the body resets the run, then keeps
    # each step `_replayed` yields and what `_RunSummaries` asked for it.
    started = time.perf_counter()
    run.error, run.summary_requests, run.summary_calls = None, {}, {}
    run._graded = run._costs = run._next_use = None
    run._pricing = _Pricing(
        transcript.messages, cache, price, rules, priced_calls, times or {}, write_ttl
    )
    run.prepared = (
        reusable_steps(earlier, run.config, context_window) if earlier is not None else []
    )
    run.reused = len(run.prepared)
    summarizer = _RunSummaries(transcript, cache, context_window, summarize, summaries)
    # The steps are kept: the collector would walk them (and every other run's) again and again.
    # Not across a paced replay's pauses: what runs meanwhile would run without a collector.
    with collector_paused() if pace is None else contextlib.nullcontext():
        try:
            async for step in _replayed(run, transcript, context_window, unrecorded, summarizer):
                summarizer.keep(run)
                # Without the request: a what-if keeps every step of every config, and each
                # request would hold the whole conversation again (the last one is kept until
                # the next: a summary call is built on it).
                summarizer.last = step
                run.prepared.append(_without_request(step))
                if pace is not None:
                    await pace()
        except PreparationError as exc:
            run.error = str(exc)
    summarizer.last = None
    run.seconds = time.perf_counter() - started


def _without_request(step: ReplayStep) -> ReplayStep:
    """``step`` without its request, built directly: `dataclasses.replace` checks every field
    by name (9 µs a step against 4: 30 ms of a slider move's replay at 5,000 requests)."""
    return ReplayStep(
        step.index, step.manifest, step.compaction, step.state, step.number, None, step.asked
    )


def _replayed(
    run: ConfigRun,
    transcript: Transcript,
    context_window: int,
    unrecorded: UnrecordedPart | None,
    summarizer: _RunSummaries,
) -> AsyncIterator[ReplayStep]:
    """The replay of ``transcript`` under ``run``'s config, after the steps ``run`` holds."""
    assert run._pricing is not None
    return replay(
        transcript.messages,
        context_window=context_window,
        counter=run._pricing.cache,
        config=run.config,
        system=transcript.system,
        tools=transcript.tools,
        summarizer=summarizer,
        unrecorded=unrecorded,
        grade=False,
        after=run.prepared[-1] if run.prepared else None,
        # The recording's pauses, against the cache's lifetime: compacting while idle.
        times=run._pricing.times,
        lifetime=run._pricing.rules.lifetime,
    )


@dataclass(eq=False)  # a summarizer, hashed by identity as a function is
class _RunSummaries:
    """The summarizer of one run's replay: each summary call built as the agent would send it,
    and what each step asked, until `keep` files it under the step."""

    transcript: Transcript
    cache: TokenCache
    context_window: int
    summarize: SummaryCaller | None
    summaries: SummaryMemo | None
    last: ReplayStep | None = None
    """The step before the one being prepared (its request is the cached form's base)."""
    asked: list[tuple[SummaryRequest, dict[str, Any]]] = field(default_factory=list)
    sent: list[SentSummary] = field(default_factory=list)

    async def __call__(self, request: SummaryRequest) -> dict[str, Any]:
        # As the agent does: the request it would send, refused (never sent) when it fits
        # neither way, which the pipeline answers with smaller pieces.
        context = self.last
        call = summary_call(
            request,
            self.cache,
            request.input_limit or self.context_window,
            context.request if context is not None else None,
            context.manifest.items if context is not None else (),
        )
        if not call.fits:
            msg = f"the summary request needs {call.tokens} tokens; its limit is {call.limit}"
            raise ContextOverflowError(msg)
        if self.summarize is None and self.summaries is not None:
            answer = await self.summaries.answer(request, extractive_summarizer)
        elif self.summarize is None:
            answer = dict(await extractive_summarizer(request))
        else:
            cached = context.request if call.cached and context is not None else None
            answer = dict(await self.summarize(request, cached))
        self.asked.append((request, answer))
        model = (self.transcript.models or ("",))[0]
        self.sent.append(SentSummary(summary_manifest(call, model, self.cache), answer))
        return answer

    def keep(self, run: ConfigRun) -> None:
        """File what was asked since the last step under the step about to be kept."""
        if self.asked:
            run.summary_requests[len(run.prepared)] = list(self.asked)
            run.summary_calls[len(run.prepared)] = list(self.sent)
            self.asked.clear()
            self.sent.clear()


def named_config(name: str, config: ContextConfig) -> ContextConfig:
    """``config`` checked (`require_config`), or a `UsageError` naming the config: an invalid one
    (built without validation) is refused before anything is replayed, not part-way through."""
    try:
        return require_config(config)
    except UsageError as exc:
        msg = f"config {name!r}: {exc}"
        raise UsageError(msg) from exc
