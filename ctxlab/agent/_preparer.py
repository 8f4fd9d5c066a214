"""`Preparer`: the agent's side of the pipeline — it prepares each request, keeps the manifests
and the incremental `PreparationMemo`, emits ``context_build`` and compaction events, and hands
every prepared state to the `ConversationOwner` to commit.

Rules kept here: a manifest is emitted for a request prepared for sending (or a failed
preparation); a compaction that did not happen emits and commits nothing; provider usage lands on
the manifest of the request it answered.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.agent._forkpoint import REASONING, StepMark
from ctxlab.agent._memory_flush import flush_facts
from ctxlab.agent._on_demand import LiveAsker
from ctxlab.config._config import ContextConfig
from ctxlab.events import CompactionEvent, ContextBuildEvent
from ctxlab.exceptions import (
    ContextOverflowError,
    MalformedReply,
    ModelError,
    PreparationError,
    StateChanged,
    UsageError,
)
from ctxlab.manifest import (
    AskRule,
    CompactionTrigger,
    ContextManifest,
    Purpose,
    Thresholds,
    Transform,
)
from ctxlab.materials import ContextRequest
from ctxlab.messages import AssistantMessage, ProviderUsage, ToolResultBlock, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import WorkingState
from ctxlab.models import summary_call, summary_manifest
from ctxlab.models._base import SummaryAnswer
from ctxlab.pipeline import (
    CallerInputs,
    CompactionOrder,
    CompactionRecord,
    Preparation,
    PreparationMemo,
    SummaryRequest,
    prepare,
    reported_items,
)
from ctxlab.retention import UserLines, compaction_retention
from ctxlab.tokens import TokenCache

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["Preparer"]


class Preparer:
    """Prepares the requests of one agent."""

    def __init__(self, agent: Agent, cache: TokenCache) -> None:
        self._agent = agent
        self.cache = cache
        self.memo = PreparationMemo()
        self.manifests: list[ContextManifest] = []
        self.last_request: ModelRequest | None = None
        """The last request sent (summaries are built as its prefix, for the prompt cache)."""
        self.sent_results: dict[str, ToolResultBlock] = {}
        """Each tool result as a request first sent it (cut, offloaded), by its call's id: the
        history keeps it whole, a saved transcript keeps this beside it (`agent_transcript`)."""
        self._previous: ContextManifest | None = None
        self._users = UserLines()  # the history's user lines, read once for every compaction
        self.marks: dict[str, StepMark] = {}
        """What each reasoning request was prepared from, by request id (`ForkPoint`)."""
        self.on_demand = LiveAsker(agent)
        """The config's compaction-on-demand rules, asked before each reasoning request."""

    def sending(self, request: ModelRequest) -> None:
        """Note ``request`` as the last request sent, and the form its new tool results went in."""
        self.last_request = request
        # New results are at the end; from the last message whose results were noted on, every
        # earlier one was noted by an earlier request.
        for message in reversed(request.messages):
            if not isinstance(message, UserMessage) or not message.tool_results:
                continue
            if message.tool_results[0].tool_use_id in self.sent_results:
                break
            for block in message.tool_results:
                self.sent_results.setdefault(block.tool_use_id, block)

    def next_thresholds(self, config: ContextConfig | None = None) -> Thresholds:
        """The lines the next request will be prepared with."""
        agent = self._agent
        model = agent.model
        return self.memo.thresholds_for(
            config or agent.context_config, model.context_window, model.max_output_tokens
        )

    def require_room(self, config: ContextConfig) -> ContextConfig:
        """``config``, if it leaves room for input in the model's window; a `UsageError` when
        the agent is built or configured, not "input limit 0" at the first call."""
        lines = self.next_thresholds(config)
        if lines.input_limit <= 0:
            msg = (
                f"no room for input: the output reservation ({lines.output_reservation} tokens; "
                f"the model's max_output_tokens is {self._agent.model.max_output_tokens}) and "
                f"the safety margin ({lines.safety_margin}) fill the {lines.context_size}-token "
                "window. Lower the model's max_tokens or budget.output_reservation"
            )
            raise UsageError(msg)
        return config

    async def request(self, purpose: Purpose, *, force: bool = False) -> Preparation:
        """Prepare a reasoning (or recovery) request, emit its manifest and commit its state."""
        agent = self._agent
        base = agent.context
        mark = StepMark(
            base, agent.tasks.state, agent._conversation.history_length, len(self.manifests)
        )
        mark.asker = self.on_demand.snapshot()
        order = self.on_demand.before() if purpose == "reasoning" else None
        try:
            prep = await self._prepare(purpose, force=force, order=order)
            if self._agent.model.exact_counts:
                prep = await self._counted(prep, purpose, force)
            prep = self._publish(prep, base)
            mark.request = prep.request
        finally:
            # Kept for failed preparations too: each is a step (a row of the Lab) to fork at.
            self._remember(mark)
        compacted = prep.compaction is not None
        self.on_demand.sent(
            prep.manifest.estimated_input_tokens, compacted, recovery=purpose == "recovery"
        )
        if prep.compaction is not None:
            record = self._graded(prep, base)
            prep = dataclasses.replace(prep, compaction=record)
            # The record says which rule asked, if one did (an exact count's retry, `_counted`,
            # may compact at the lines instead, and its record then names none).
            trigger = _trigger(purpose, record.asked)
            self._agent._emit(CompactionEvent(trigger, record, self._agent._call))
        return prep

    def _remember(self, mark: StepMark) -> None:
        for manifest in reversed(self.manifests[mark.manifest_index :]):
            if manifest.purpose in REASONING:
                self.marks[manifest.request_id] = mark
                return

    def _graded(self, prep: Preparation, base: WorkingState) -> CompactionRecord:
        """The compaction's record with its retention, measured on the agent's durable
        history (the original messages, before truncation and offload) — never by the pipeline
        that compacted."""
        assert prep.compaction is not None  # graded only where a compaction happened
        history = [m for m in self._agent.history if isinstance(m, UserMessage | AssistantMessage)]
        kept = compaction_retention(history, base, prep.state, reader=self._users)
        return dataclasses.replace(prep.compaction, retention=kept)

    async def _counted(self, prep: Preparation, purpose: Purpose, force: bool) -> Preparation:
        # The provider's count of what is about to be sent. The estimate decides the budget (a
        # count per block over the network would be far too slow); the exact count catches an
        # estimate that let through a request the provider would refuse: compact, once.
        model = self._agent.model
        try:
            exact = await model.count_tokens(prep.request)
        except ModelError:
            return prep  # counting is an extra: a failed count changes nothing
        manifest = dataclasses.replace(prep.manifest, exact_input_tokens=exact)
        prep = dataclasses.replace(prep, manifest=manifest)
        if exact <= manifest.input_limit or force or purpose != "reasoning":
            return prep
        retry = await self._prepare(purpose, force=True)
        if retry.compaction is None and prep.compaction is not None:
            # Nothing more to compact at the lines: the retry is the request before the
            # compaction already made (an on-demand rule's, its summary paid), larger still.
            # That compaction is the one sent and said, never dropped behind a paid summary.
            return prep
        try:
            exact = await model.count_tokens(retry.request)
        except ModelError:
            return retry
        manifest = dataclasses.replace(retry.manifest, exact_input_tokens=exact)
        return dataclasses.replace(retry, manifest=manifest)

    async def compact(
        self,
        config: ContextConfig | None,
        hint: str | None,
        force: bool,
        threshold: int | None,
        trigger: CompactionTrigger,
    ) -> CompactionRecord | None:
        """Compact the working context when due (or ``force``); commit and emit only if it was."""
        base = self._agent.context
        if not base.conversation:
            return None
        prep = await self._prepare(
            "compaction", config=config, force=force, threshold=threshold, instructions=hint
        )
        if prep.compaction is None:
            return None  # light passes alone do not make a compression: nothing is kept
        prep = self._publish(prep, base)
        record = self._graded(prep, base)
        self.on_demand.compacted()
        self._agent._emit(CompactionEvent(trigger, record, self._agent._call))
        return record

    def attach_usage(
        self,
        request_id: str,
        usage: ProviderUsage | None,
        transforms: Sequence[Transform] = (),
        *,
        request: ModelRequest | None = None,
        applied: Sequence[Mapping[str, Any]] = (),
    ) -> ContextManifest | None:
        """Put the provider's usage, and what the provider itself did to the request
        (``transforms``), on the manifest of the request it answered; with the provider's own
        report of its edits (``applied``) on ``request``, the items it billed after them.
        Returns the updated manifest (None when no manifest has ``request_id``)."""
        for index in range(len(self.manifests) - 1, -1, -1):
            manifest = self.manifests[index]
            if manifest.request_id == request_id:
                updated = manifest.with_usage(usage) if usage is not None else manifest
                if transforms:
                    updated = dataclasses.replace(
                        updated, transforms=(*updated.transforms, *transforms)
                    )
                edits = self._agent.model.server_edits
                if request is not None and applied and edits is not None:
                    billed = reported_items(manifest.items, request, edits, applied, self.cache)
                    updated = dataclasses.replace(updated, provider_items=billed)
                self.manifests[index] = updated
                if self._previous is manifest:
                    self._previous = self.manifests[index]
                return updated
        return None

    async def _summarize(self, request: SummaryRequest) -> Mapping[str, Any]:
        # 000 builds summary requests through the same compiler: each gets its manifest and a
        # context_build event (purpose "summary"), so what a summary call costs is visible.
        agent = self._agent
        model = agent.summary_model
        notes: tuple[Transform, ...] = ()
        if (
            request.attempt == 1
            and agent.workspace is not None
            and agent.context_config.compaction.flush_before_compact
        ):
            notes = (await flush_facts(agent.workspace, request),)
        lines = self.next_thresholds()
        limit = request.input_limit or lines.input_limit
        # The cached form (the last request again, then the instruction) reads the provider's
        # cache, but is the larger one: when it does not fit, the span alone is sent (the
        # pipeline has cut the span into pieces that fit that way).
        previous = self._previous.items if self._previous is not None else ()
        call = summary_call(request, self.cache, limit, self.last_request, previous)
        manifest = summary_manifest(
            call, model.name, self.cache, transforms=notes, thresholds=lines
        )
        if call.fits:
            manifest = dataclasses.replace(manifest, sent_at=time.time())  # sent just below
        self.manifests.append(manifest)
        agent._emit(ContextBuildEvent(manifest, agent._call, call.request))
        if not call.fits:
            # Never sent: the pipeline answers an overflow with smaller pieces.
            raise ContextOverflowError(manifest.error or "the summary request is too long")
        # The summary call's bill goes on its manifest, as a reasoning request's does: the
        # run's cost then prices what the provider billed, not the estimate.
        try:
            answer = await model.summarize(
                request, context=self.last_request if call.cached else None
            )
        except MalformedReply as exc:
            if exc.usage is not None:
                self._bill_summary(manifest.request_id, exc.usage)
            raise
        billed = answer.response if isinstance(answer, SummaryAnswer) else None
        if billed is not None and billed.usage is not None:
            self._bill_summary(manifest.request_id, billed.usage)
        return answer

    def _bill_summary(self, request_id: str, usage: ProviderUsage) -> None:
        # On the manifest, and in the session log: a summary call has no response event, and
        # without this its bill was lost when the session resumed.
        self.attach_usage(request_id, usage)
        self._agent._recorder.record_usage(request_id, usage)

    async def _prepare(
        self,
        purpose: Purpose,
        *,
        config: ContextConfig | None = None,
        force: bool = False,
        threshold: int | None = None,
        instructions: str | None = None,
        order: CompactionOrder | None = None,
    ) -> Preparation:
        agent = self._agent
        config = config or agent.context_config
        request_id = uuid.uuid4().hex[:16]
        try:
            identity = ContextRequest(
                agent.agent_id, agent.user_id, agent.session_id, request_id, purpose
            )
            materials = await agent._materials.load(
                purpose,
                identity,
                count=self.cache.text,
                workspace_max_tokens=config.budget.workspace_max_tokens,
            )
            return await prepare(
                agent.context,
                context_window=agent.model.context_window,
                counter=self.cache,
                config=config,
                materials=materials,
                request_id=request_id,
                tools=agent.tool_schemas(config),
                summarizer=self._summarize,
                offloader=agent.offloader,
                purpose=purpose,
                model=agent.model.name,
                previous=self._previous,
                memo=self.memo,
                max_output_tokens=agent.model.max_output_tokens,
                caller=CallerInputs(
                    projection=agent._tasks.project,
                    # 002: the notice is injected only while no task is in progress.
                    usage_notice=not any(
                        t.status == "in_progress" for t in agent.tasks.state.todos
                    ),
                    selection_policy=agent._materials.selection_policy,
                ),
                compaction=order or CompactionOrder(force, threshold, instructions),
            )
        except PreparationError as exc:
            if exc.manifest is None:
                # Failed before any counting (a source): 000's "no statistics" manifest.
                exc.manifest = _unavailable(request_id, purpose, agent.model.name, str(exc))
            self.manifests.append(exc.manifest)
            agent._emit(ContextBuildEvent(exc.manifest, agent._call))
            raise

    def _publish(self, prep: Preparation, base: WorkingState) -> Preparation:
        agent = self._agent
        try:
            # Validation passed: the candidate (compacted, truncated) becomes the working state,
            # unless another commit came first while this one was prepared.
            agent._conversation.commit(prep.state, base=base)
        except StateChanged as exc:
            exc.manifest = dataclasses.replace(
                prep.manifest, validation="state_conflict", error=str(exc)
            )
            self.manifests.append(exc.manifest)
            agent._emit(ContextBuildEvent(exc.manifest, agent._call))
            raise
        # Published just before it is sent: the wall clock the cost model's cache expires on.
        prep = dataclasses.replace(
            prep, manifest=dataclasses.replace(prep.manifest, sent_at=time.time())
        )
        self.manifests.append(prep.manifest)
        if prep.manifest.purpose != "compaction":
            self._previous = prep.manifest
        agent._emit(ContextBuildEvent(prep.manifest, agent._call, prep.request))
        return prep


def _trigger(purpose: Purpose, asked: AskRule | None) -> CompactionTrigger:
    """What started a compaction made while preparing a request: an overflow's recovery, an
    on-demand rule that asked, else the trigger line."""
    if purpose == "recovery":
        return "overflow"
    return "on_demand" if asked is not None else "automatic"


def _unavailable(request_id: str, purpose: Purpose, model: str, error: str) -> ContextManifest:
    return ContextManifest(
        request_id=request_id,
        purpose=purpose,
        model=model,
        estimated_input_tokens=-1,
        input_limit=-1,
        counting_method="unavailable",
        exact=False,
        items=(),
        transforms=(),
        validation="build_failed",
        error=error,
    )
