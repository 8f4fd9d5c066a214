"""One config's replay of a session, as a what-if keeps it (`ConfigRun`), and `replay_run`,
which fills it: every request prepared, each compaction's summary calls built as the agent would
send them (`ctxlab.models.summary_call`: refused, never sent, when they fit neither way — the
pipeline then summarizes in smaller pieces, as it does for the agent), all of it priced."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from ctxlab.analysis._cost import CacheRules, Price, RequestCost, request_costs
from ctxlab.analysis._replay import ReplayStep, replay
from ctxlab.analysis._shapes import SentSummary, priced_shapes
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import ContextOverflowError, PreparationError
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import ContextManifest
from ctxlab.models import summary_call, summary_manifest
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCache

__all__ = ["ConfigRun", "replay_run"]


@dataclass
class ConfigRun:
    """One config's replay of the session."""

    name: str
    config: ContextConfig
    steps: list[ReplayStep] = field(default_factory=list)
    costs: list[RequestCost] = field(default_factory=list)
    """Reasoning requests and summary calls, in the order they would be sent."""
    error: str | None = None
    """Why the replay stopped early, if it did."""
    seconds: float = 0.0
    """How long the replay took."""
    summary_requests: dict[int, list[tuple[SummaryRequest, dict[str, Any]]]] = field(
        default_factory=dict
    )
    """The summary requests each compacting step made (by step position), with their answers:
    one, or one per piece when the span did not fit a single request."""
    summary_calls: dict[int, list[SentSummary]] = field(default_factory=dict)
    """The summary calls each compacting step would send (by step position), as the agent
    sends them (the cached form when it fits, else the span alone): what is priced."""

    @property
    def manifests(self) -> list[ContextManifest]:
        """The prepared requests' manifests."""
        return [s.manifest for s in self.steps]

    @property
    def cost(self) -> float:
        """USD over the session, summary calls included."""
        return sum(c.cost for c in self.costs)

    def __repr__(self) -> str:
        # A run holds every request it prepared: the dataclass repr would print them all (in a
        # notebook cell's output, and in Python 3.11's asyncio.run, which formats the result of
        # the task it ran — seconds for a 500-request run).
        compactions = sum(s.compaction is not None for s in self.steps)
        state = f", error={self.error!r}" if self.error else ""
        return (
            f"ConfigRun({self.name!r}, {len(self.steps)} requests, {compactions} compactions, "
            f"${self.cost:.2f}{state})"
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
) -> None:
    """Replay ``transcript`` under ``run.config`` into ``run`` (its steps, summary requests and
    calls, costs, error, time); ``priced_calls`` False prices no summary call (summaries made
    offline); ``unrecorded`` the part of every request the recording does not hold
    (`ctxlab.unrecorded_part`)."""
    started = time.perf_counter()
    run.steps, run.error, run.summary_requests, run.summary_calls = [], None, {}, {}
    asked: list[tuple[SummaryRequest, dict[str, Any]]] = []
    sent: list[SentSummary] = []
    last: list[ReplayStep] = []  # the step before the one being prepared

    async def summarizer(request: SummaryRequest) -> dict[str, Any]:
        # As the agent does: the request it would send, refused (never sent) when it fits
        # neither way, which the pipeline answers with smaller pieces.
        context = last[0] if last else None
        call = summary_call(
            request,
            cache,
            request.input_limit or context_window,
            context.request if context is not None else None,
            context.manifest.items if context is not None else (),
        )
        if not call.fits:
            msg = f"the summary request needs {call.tokens} tokens; its limit is {call.limit}"
            raise ContextOverflowError(msg)
        answer = await extractive_summarizer(request)
        asked.append((request, answer))
        model = str((transcript.meta.get("models") or [""])[0])
        sent.append(SentSummary(summary_manifest(call, model, cache), answer))
        return answer

    try:
        async for step in replay(
            transcript.messages,
            context_window=context_window,
            counter=cache,
            config=run.config,
            system=transcript.system,
            tools=transcript.tools,
            summarizer=summarizer,
            unrecorded=unrecorded,
        ):
            if asked:
                run.summary_requests[len(run.steps)] = list(asked)
                run.summary_calls[len(run.steps)] = list(sent)
                asked.clear()
                sent.clear()
            # Without the request: a what-if keeps every step of every config, and each
            # request would hold the whole conversation again (the last one is kept until
            # the next: a summary call is built on it).
            last[:] = [step]
            run.steps.append(dataclasses.replace(step, request=None))
    except PreparationError as exc:
        run.error = str(exc)
    last.clear()
    shapes = priced_shapes(
        run.steps,
        run.summary_calls if priced_calls else {},
        transcript.messages,
        cache,
    )
    run.costs = request_costs(shapes, price, rules)
    run.seconds = time.perf_counter() - started
