"""`ReplaySession`: a recorded transcript as a source of steps, in one of two views.

- ``view="replayed"`` — ctxlab's pipeline over the recorded conversation, under a config (a new
  config replays again): what ctxlab would have sent, the view the what-if lab compares;
- ``view="recorded"`` — the requests the recorded agent itself sent, rebuilt from the file
  (`ctxlab.recorded_requests`): after each of the session's own compactions the conversation
  restarts from its summary, as the agent's did. This is what the provider billed.

It speaks the part of the agent's interface a Lab observes — ``subscribe``, ``manifests``,
``context_config``, ``next_thresholds`` — and emits the same typed events: a ``context_build``
per request (with the request itself, so every panel shows the recorded content) and a
``model_response`` carrying the usage the provider reported, when the transcript recorded it.
The session's own compactions are marked in both views: a ``recorded_compaction`` transform on
the first request after each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from ctxlab.agent._watched import Capabilities
from ctxlab.analysis._bill_check import CacheAgreement, cache_agreement, cache_check
from ctxlab.analysis._cache_rules import cache_rules_for
from ctxlab.analysis._calibration import Calibration, calibrate
from ctxlab.analysis._prices import recorded_model
from ctxlab.analysis._recorded import (
    AFTER,
    RecordedCompaction,
    RecordedItems,
    RecordedRequest,
    compactions_by_request,
    recorded_compactions,
    recorded_manifest,
    recorded_requests,
    recorded_transforms,
    unrecorded_parts,
)
from ctxlab.analysis._replay import replay
from ctxlab.analysis._unrecorded import (
    UnrecordedPart,
    UnrecordedTokens,
    unrecorded_note,
    unrecorded_part,
)
from ctxlab.config._config import ContextConfig
from ctxlab.events import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.exceptions import PreparationError, UsageError
from ctxlab.io._arguments import checked_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import CompactionTrigger, ContextManifest
from ctxlab.materials import SystemPart
from ctxlab.messages import AssistantMessage, request_start
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline import CompactionRecord
from ctxlab.pipeline._stages import fixed_part
from ctxlab.sources._base import ModelInfo, StepSource
from ctxlab.tokens import TokenCounter, counter_for
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["VIEWS", "ReplaySession", "View"]

View = Literal["replayed", "recorded"]
VIEWS: dict[View, str] = {
    "recorded": "as recorded",
    "replayed": "replayed under a config",
}
"""The two views of a recording, and how they are named in the Lab."""


class ReplaySession(StepSource):
    """A transcript shown step by step, without calling a model.

    Args:
        transcript: What to show (see `ctxlab.load`).
        context_window: The window of the model the session is replayed for.
        config: The config to replay under (the defaults when omitted; setting
            ``context_config`` takes effect at the next `run`).
        counter: How to count tokens (the recorded model's own tokenizer where one is public
            offline, else cl100k_base: `ctxlab.tokens.counter_for`).
        view: ``"recorded"`` (the requests the recorded agent sent, the default: a recording
            shows what it holds) or ``"replayed"`` (ctxlab's pipeline under ``config``); see the
            module's docstring.
        unrecorded_tokens: What each request held that the file does not (a harness's own
            System prompt and tool schemas): tokens a request, a harness profile
            (``"claude_code"``) or an `UnrecordedPart`; None sizes it from the recording's
            bill where it has one (`ctxlab.unrecorded_part`). It is carried in both views as
            its own ``unrecorded`` placement.
    """

    capabilities = Capabilities(
        read_only=True,
        replays=True,
        note="replay of a recording: read-only; a config applied replays it again",
    )

    def __init__(
        self,
        transcript: Transcript,
        *,
        context_window: int,
        config: ContextConfig | None = None,
        counter: TokenCounter | None = None,
        view: View = "recorded",
        unrecorded_tokens: UnrecordedTokens = None,
    ) -> None:
        if view not in VIEWS:
            msg = f"view must be one of {list(VIEWS)}, got {shown(view)}"
            raise UsageError(msg)
        checked_transcript(transcript, "ReplaySession")
        model = ModelInfo(f"replay of {transcript.name}", context_window)
        # Counted with the recorded model's own tokenizer where one is public (o200k: GPT-4o/5).
        counter = counter or counter_for(recorded_model(transcript.meta))
        super().__init__(transcript.name, model, config, counter)
        self.transcript = transcript
        self.view: View = view
        self.compactions: tuple[RecordedCompaction, ...] = recorded_compactions(transcript)
        """The recorded session's own compactions."""
        self.unrecorded: list[str] = unrecorded_parts(transcript)
        """What the file does not record of the requests (System prompt, tool schemas, ...)."""
        self.calibration: Calibration | None = (
            calibrate(transcript, self.token_cache) if transcript.usage else None
        )
        """The recording's estimates reconciled with its bill (None without usage)."""
        self.unrecorded_part: UnrecordedPart | None = unrecorded_part(
            transcript, unrecorded_tokens, calibration=self.calibration
        )
        """The size of what the file does not record, per request, and how it is known (None
        when nothing sizes it, or nothing is missing)."""
        self.unrecorded_note: str | None = unrecorded_note(transcript, self.unrecorded_part)
        """That note in one line: the size and how it is known, or that the figures exclude
        it."""
        self.on_progress: Callable[[int, int], None] | None = None
        """Called with (requests done, requests in all) as a run goes."""
        self.stopped: str | None = None
        """Why the last replay under a config stopped before the end (a request that could not
        be prepared — its manifest, failed, is the last), or None."""
        self.request_times: dict[str, float] = {}
        """When each request of the last run was sent, on the recording's clock (the time of
        the reply it stands for), by request id: a Lab's `StepLog.clock`."""
        self._checked: pd.DataFrame | None = None
        self._recorded: tuple[Transcript, list[RecordedRequest]] | None = None

    def recorded(self) -> list[RecordedRequest]:
        """The transcript's requests as recorded (`ctxlab.recorded_requests`), made once per
        transcript: the recorded view and a Lab's compaction sites read the same pass."""
        if self._recorded is None or self._recorded[0] is not self.transcript:
            self._recorded = (self.transcript, recorded_requests(self.transcript))
        return self._recorded[1]

    def cache_check(self) -> pd.DataFrame:
        """The recording's cache model checked against its bill (`ctxlab.cache_check`, with
        this session's calibration and counter), one row per billed request; computed once."""
        if self._checked is None:
            self._checked = cache_check(
                self.transcript, calibration=self.calibration, counter=self.token_cache
            )
        return self._checked.copy()

    @property
    def cache_agreement(self) -> CacheAgreement | None:
        """How far the cache model's reads agree with the bill (`CacheAgreement`: the figure
        the Lab's header shows), or None for a recording without cache usage."""
        frame = self.cache_check()
        return cache_agreement(frame) if len(frame) else None

    @property
    def request_count(self) -> int:
        """How many requests a run shows (one per reply after the first user message)."""
        messages = self.transcript.messages
        return sum(isinstance(m, AssistantMessage) for m in messages[request_start(messages) :])

    async def run(self) -> list[ContextManifest]:
        """Show the transcript from the start in the view in force (a replay under the config
        in force); returns the manifests (also emitted as events)."""
        self.running = True
        self.manifests = []
        self.request_times.clear()
        try:
            if self.view == "recorded":
                self._run_recorded()
            else:
                await self._run_replayed()
        finally:
            self.running = False
        return self.manifests

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(done, total)

    def _run_recorded(self) -> None:
        transcript = self.transcript
        system = (SystemPart("system_prompt", transcript.system),) if transcript.system else ()
        fixed = fixed_part(system, transcript.tools, self.token_cache)
        notes = (self.unrecorded_note,) if self.unrecorded_note else ()
        part = self.unrecorded_part
        requests = self.recorded()
        previous: ContextManifest | None = None
        itemized = RecordedItems((*fixed.system_items, *fixed.tool_items), self.token_cache)
        for request in requests:
            manifest = recorded_manifest(
                request,
                self.token_cache,
                context_window=self.model.context_window,
                previous=previous,
                notes=notes,
                itemized=itemized,
                unrecorded=part.at(request.reply, request.segment) if part is not None else None,
                sent_at=transcript.times.get(request.reply),
            )
            previous = manifest
            self.manifests.append(manifest)
            sent = ModelRequest(fixed.system_text, request.messages, transcript.tools)
            self._subscribers.emit(ContextBuildEvent(manifest, "recorded", sent))
            self._respond(request.reply, manifest)
            self._progress(request.number + 1, len(requests))

    async def _run_replayed(self) -> None:
        transcript = self.transcript
        total = self.request_count
        replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
        rank_of = {index: rank for rank, index in enumerate(replies)}
        # The compactions between two replies mark ctxlab's request for the later one (those
        # before the first request, on the first).
        before = compactions_by_request(self.compactions, len(replies) - total)
        models = transcript.meta.get("reply_models")
        models = models if isinstance(models, dict) else {}
        self.stopped = None
        try:
            async for step in replay(
                transcript.messages,
                context_window=self.model.context_window,
                counter=self.token_cache,
                config=self._config,
                system=transcript.system,
                tools=transcript.tools,
                unrecorded=self.unrecorded_part,
                # On the recording's clock: a config that compacts while idle does so.
                times=transcript.times,
                lifetime=cache_rules_for(recorded_model(transcript.meta)).lifetime,
            ):
                manifest = step.manifest
                model = models.get(str(rank_of[step.index]))
                if model:
                    # The request stands for the recorded one, for the model that answered it.
                    manifest = dataclasses.replace(manifest, model=model)
                rank = rank_of[step.index]
                usage = transcript.usage.get(step.index)
                marks = recorded_transforms(
                    tuple(before.get(rank, ())), "", usage.total_input_tokens if usage else None
                )
                if rank == len(replies) - 1:  # the last: what the session recorded after it
                    later = tuple(c for r, cs in before.items() if r > rank for c in cs)
                    marks += recorded_transforms(later, AFTER, None)
                if marks:
                    # Where the recorded agent compacted: marked on ctxlab's request at that point.
                    manifest = dataclasses.replace(
                        manifest, transforms=(*manifest.transforms, *marks)
                    )
                self.manifests.append(manifest)
                self._subscribers.emit(ContextBuildEvent(manifest, "replay", step.request))
                if step.compaction is not None:
                    self._subscribers.emit(_compaction_event(step.compaction))
                self._respond(step.index, manifest)
                self._progress(step.number + 1, total)
        except PreparationError as exc:
            # The request that could not be prepared is shown — its manifest says why — and the
            # replay stops there, as the agent's would have.
            self.stopped = str(exc)
            if exc.manifest is not None:
                self.manifests.append(exc.manifest)
                self._subscribers.emit(ContextBuildEvent(exc.manifest, "replay"))

    def _respond(self, index: int, manifest: ContextManifest) -> None:
        when = self.transcript.times.get(index)
        if when is not None:
            self.request_times[manifest.request_id] = when
        usage = self.transcript.usage.get(index)
        if usage is None:
            return
        message = self.transcript.messages[index]
        self._subscribers.emit(
            ModelResponseEvent(
                message,  # type: ignore[arg-type]
                "recorded",
                usage,
                manifest.request_id,
                "replay" if self.view == "replayed" else "recorded",
            )
        )


def _compaction_event(record: CompactionRecord) -> CompactionEvent:
    """A replayed compaction's event, as the agent emits it: ``on_demand`` with the rule its
    record names when one asked, else ``automatic`` (the trigger line)."""
    trigger: CompactionTrigger = "automatic" if record.asked is None else "on_demand"
    return CompactionEvent(trigger, record, "replay")
