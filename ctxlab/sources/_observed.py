"""`ObservedSession`: another framework's agent seen — and, by choice, steered — through ctxlab's
pipeline, as a source of steps for the Lab.

A framework adapter (`ctxlab.integrations`) hands over the messages its agent is about to send,
converted to ctxlab's messages. The session keeps its own working state, like an agent: what the
framework adds since the last request (the model's reply, tool results, a new prompt) is appended,
the pipeline prepares a request — compaction, truncation, offload and all — and the manifest goes
to the Lab. In ``"manage"`` mode the adapter sends ctxlab's request instead of the framework's; in
``"observe"`` mode the framework's messages go out unchanged and the Lab shows what ctxlab would
have sent.

New messages are found by prefix: the framework's list starts with either what ctxlab returned
last time (a framework that keeps the processed history, as pydantic-ai does, with its own copy
of the request it was sending) or what it sent last time (one that keeps its own, as a LangChain
middleware's ``wrap_model_call``). Anything else
(the user rewrote the history) starts the working state over from the list as given, counted in
``resyncs``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal

from ctxlab.config._config import ContextConfig
from ctxlab.events import CompactionEvent, ContextBuildEvent, ErrorEvent, ModelResponseEvent
from ctxlab.exceptions import PreparationError, UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.materials import Materials, SystemPart
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from ctxlab.messages._request import ToolSchema
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline import PreparationMemo, Summarizer, extractive_summarizer, prepare
from ctxlab.retention import UserLines, compaction_retention
from ctxlab.sources._base import ModelInfo, StepSource
from ctxlab.tokens import TokenCounter
from ctxlab.util._checks import sequence_of, shown

_EXAMPLE = "a list of UserMessage and AssistantMessage (the framework's history, read)"

__all__ = ["ObservedSession"]

Message = UserMessage | AssistantMessage
Mode = Literal["manage", "observe"]


class ObservedSession(StepSource):
    """A live session of another framework's agent, prepared by ctxlab's pipeline step by step.

    Args:
        context_window: The window of the model the agent calls.
        mode: ``"manage"`` (the framework sends ctxlab's request) or ``"observe"`` (it sends its
            own; the Lab shows what ctxlab would send).
        config: The config in force (the defaults when omitted; a new one applies from the next
            request).
        counter: How to count tokens (tiktoken cl100k_base when omitted).
        summarizer: How compaction summarizes (offline: the extractive summarizer).
        name: What the Lab calls the session.
        model: The name of the model the agent calls (on every manifest).
        max_output_tokens: The response size the agent asks for, when known (it reserves room).
    """

    def __init__(
        self,
        *,
        context_window: int,
        mode: Mode = "manage",
        config: ContextConfig | None = None,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | None = extractive_summarizer,
        name: str = "observed agent",
        model: str = "",
        max_output_tokens: int | None = None,
    ) -> None:
        if mode not in ("manage", "observe"):
            msg = f"mode must be 'manage' or 'observe', got {mode!r}"
            raise UsageError(msg)
        info = ModelInfo(model or "unknown model", context_window, max_output_tokens)
        super().__init__(name, info, config, counter)
        self._model_name = model
        self.mode: Mode = mode
        self.summarizer = summarizer
        self.resyncs = 0
        """How many times the framework's history matched neither list and the state restarted."""
        self._state = WorkingState()
        self._memo = PreparationMemo()
        self._history: list[Message] = []
        self._users = UserLines()  # the history's user lines, read once for every compaction
        self._system = ""
        self._tools: tuple[ToolSchema, ...] = ()
        self._returned: list[str] = []
        self.material_messages = 0
        """How many messages at the end of the last list returned are per-request material."""
        self._received: list[str] = []
        self.last_error: BaseException | None = None
        """The last failure of ctxlab's own in ``"observe"`` mode (recorded, never raised)."""

    def reset(self) -> None:
        """Forget everything: working state, history and manifests (the subscribers stay)."""
        self._state, self._memo = WorkingState(), PreparationMemo()
        self._history, self._users = [], UserLines()
        self._returned, self._received = [], []
        self.manifests = []
        self.material_messages = 0

    def _new_messages(self, messages: Sequence[Message]) -> list[Message] | None:
        hashes = [m.content_hash for m in messages]
        # pydantic-ai keeps the processed history but its own copy of the request being sent:
        # ctxlab's list with the framework's last message is a third way to continue.
        mixed = [*self._returned[:-1], *self._received[-1:]] if self._returned else []
        for known in (self._returned, mixed, self._received):
            if hashes[: len(known)] == known:
                return list(messages[len(known) :])
        return None

    async def prepare(
        self,
        messages: Sequence[Message],
        *,
        system: str = "",
        tools: Sequence[ToolSchema] = (),
        usage: Mapping[int, ProviderUsage] | None = None,
    ) -> list[Message]:
        """The messages to send for the framework's ``messages``: ctxlab's request in
        ``"manage"`` mode, ``messages`` unchanged in ``"observe"`` mode.

        ``usage`` is the provider's usage by message index, when the framework records it on its
        replies: the newest reply's usage goes on the request it answered.

        Emits a ``context_build`` event (and a ``compaction`` one when the request compacted).
        In ``"manage"`` mode a request that cannot fit raises `PreparationError`; in
        ``"observe"`` mode no failure of ctxlab's reaches the framework: it is recorded (an
        ``error`` event, the failed manifest, `last_error`) and ``messages`` go out unchanged.
        """
        # What is no list of messages cannot go out unchanged either: refused in either mode.
        messages = list(
            sequence_of(messages, (UserMessage, AssistantMessage), "messages", _EXAMPLE)
        )
        try:
            return await self._prepare_step(messages, system, tools, usage)
        except Exception as exc:
            self.record_failure(exc)
            return list(messages)

    def record_failure(self, exc: BaseException) -> None:
        """A failure of ctxlab's own around a call: in ``"manage"`` mode it is the caller's to
        see, and is raised again; in ``"observe"`` mode it is recorded (an ``error`` event,
        `last_error`) and the next call starts again from the framework's messages. `prepare`
        and the adapters call it for whatever fails (reading the framework's messages,
        preparing, reading its reply).

        Observing must never break the agent it watches; the state may be part-way through a
        step, so it is dropped, not trusted."""
        if self.mode == "manage":
            raise exc
        self.running = False
        self.material_messages = 0
        self.last_error = exc
        self._state, self._memo, self._history = WorkingState(), PreparationMemo(), []
        self._users = UserLines()
        self._returned, self._received = [], []
        self._subscribers.emit(ErrorEvent(exc, "observed"))

    async def _prepare_step(
        self,
        messages: Sequence[Message],
        system: str,
        tools: Sequence[ToolSchema],
        usage: Mapping[int, ProviderUsage] | None,
    ) -> list[Message]:
        # The adapter's arguments, checked first (observing, a failure is recorded as any).
        tools = sequence_of(tools, ToolSchema, "tools", "a list of ToolSchema")
        if not isinstance(system, str):
            msg = f"system must be the System prompt's text, got {shown(system)}"
            raise UsageError(msg)
        if usage is not None and not isinstance(usage, Mapping):
            msg = f"usage must map a reply's index to its ProviderUsage, got {shown(usage)}"
            raise UsageError(msg)
        new = self._new_messages(messages)
        if new is None:
            self.resyncs += 1
            self._state, self._memo = WorkingState(), PreparationMemo()
            new = list(messages)
        self._history.extend(new)
        replies = [m for m in new if isinstance(m, AssistantMessage)]
        if usage and replies:
            index = len(messages) - 1 - messages[::-1].index(replies[-1])
            if index in usage:
                self.record_response(replies[-1], usage[index])
        self._received = [m.content_hash for m in messages]
        self._system, self._tools = system, tuple(tools)
        if not messages or isinstance(messages[-1], AssistantMessage):
            # Nothing to answer (a framework that calls its processor on a finished turn).
            self._returned = list(self._received)
            return list(messages)
        if new:
            self._state = self._state.append(*new)
        self.running = True
        try:
            sent = await self._prepare(messages)
        finally:
            self.running = False
        # The per-request material at the end (transient notices, references) is not history:
        # a framework that keeps the processed list gives it back, and its adapter drops it.
        kept = sent[: len(sent) - self.material_messages]
        self._returned = [m.content_hash for m in kept]
        return sent

    async def _prepare(self, messages: Sequence[Message]) -> list[Message]:
        previous = self.manifests[-1] if self.manifests else None
        materials = (
            Materials(system=(SystemPart("system_prompt", self._system),))
            if self._system
            else Materials()
        )
        try:
            prep = await prepare(
                self._state,
                context_window=self.model.context_window,
                counter=self.token_cache,
                config=self._config,
                materials=materials,
                tools=self._tools,
                summarizer=self.summarizer,
                previous=previous,
                request_id=f"step-{len(self.manifests)}",
                model=self._model_name,
                memo=self._memo,
                max_output_tokens=self.model.max_output_tokens,
            )
        except PreparationError as exc:
            self.material_messages = 0
            if exc.manifest is not None:
                self.manifests.append(exc.manifest)
                self._subscribers.emit(ContextBuildEvent(exc.manifest, "observed"))
            raise
        before, self._state = self._state, prep.state
        self.manifests.append(prep.manifest)
        self._subscribers.emit(ContextBuildEvent(prep.manifest, "observed", prep.request))
        if prep.compaction is not None:
            # Graded on the framework's own messages (the durable history), not the compacted
            # working state.
            kept = compaction_retention(self._history, before, prep.state, reader=self._users)
            record = dataclasses.replace(prep.compaction, retention=kept)
            self._subscribers.emit(CompactionEvent("automatic", record, "observed"))
        if self.mode == "observe":
            self.material_messages = 0
            return list(messages)
        self.material_messages = prep.request.material_messages
        return list(prep.request.messages)

    def record_response(
        self, message: AssistantMessage, usage: ProviderUsage | None, stop_reason: str = ""
    ) -> None:
        """Report the model's answer to the last request (its usage goes on that step)."""
        if not self.manifests:
            return
        request_id = self.manifests[-1].request_id
        self._subscribers.emit(
            ModelResponseEvent(message, stop_reason or "end_turn", usage, request_id, "observed")
        )

    def transcript(self) -> Transcript:
        """Everything the framework's agent said and did so far (the durable history, not the
        compacted working state), as a `Transcript` to save or replay."""
        return Transcript(
            name=self.name,
            meta={"source": "observed", "resyncs": self.resyncs},
            system=self._system,
            messages=tuple(self._history),
            tools=self._tools,
        )
