"""The typed events of an agent run: what `Agent.stream_events` yields and what subscribers
(the Lab, the session recorder) receive — and what every step source emits in the agent's place.

Every event has a ``type`` string (``context_build``, ``model_response``, ...) and the id of the
agent call it belongs to. Events are plain frozen dataclasses: cheap to make, safe to keep.
Consumers dispatch on the class (``isinstance`` or ``match``), which the type checker follows;
``type`` is the name an event has when it is serialised (the session log, JSON).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.exceptions import UsageError
from ctxlab.manifest import AskRule, CompactionMethod, CompactionTrigger, ContextManifest
from ctxlab.messages import AssistantMessage, ProviderUsage, ToolResultBlock, ToolUseBlock
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline import CompactionRecord
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    from ctxlab.models._retry import RetryWait

__all__ = [
    "CompactionEvent",
    "CompactionKind",
    "ContextBuildEvent",
    "ErrorEvent",
    "Event",
    "ModelResponseEvent",
    "ReplyEvent",
    "Subscribers",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnCommittedEvent",
]

CompactionKind = Literal["automatic", "manual", "agentic", "overflow", "on_demand", "fallback"]
"""Deprecated: `CompactionEvent.kind` mixed what started a compaction with how it was done
(``fallback``). Read ``event.trigger`` (a `CompactionTrigger`) and ``event.method`` (a
`CompactionMethod`) instead."""


@dataclass(frozen=True)
class ContextBuildEvent:
    """A request was prepared (or failed to be): its manifest."""

    manifest: ContextManifest
    """The manifest; ``manifest.validation`` says whether preparation passed."""
    call: str = ""
    """The agent call (one ``await agent(...)``) this belongs to."""
    request: ModelRequest | None = field(default=None, repr=False)
    """The prepared request (None when preparation failed): what the model is sent."""
    type: Literal["context_build"] = field(default="context_build", init=False)


@dataclass(frozen=True)
class ModelResponseEvent:
    """The model answered a request."""

    message: AssistantMessage
    """The assistant turn."""
    stop_reason: str
    """Why the model stopped."""
    usage: ProviderUsage | None
    """What the provider reported."""
    request_id: str
    """The request this answers (its manifest's ``request_id``): after an overflow recovery,
    the recovery request, not the rejected one."""
    call: str = ""
    manifest: ContextManifest | None = field(default=None, repr=False, kw_only=True)
    """The answered request's manifest with what the response told of it (usage, the
    provider's own edits and the items it billed after them); None when not known."""
    from_cache: bool = field(default=False, kw_only=True)
    """Whether the reply came from a `ctxlab.models.ResponseCache`, not the provider: its
    ``usage`` is what the call cost when it was first answered, though nothing was spent now."""
    retries: tuple[RetryWait, ...] = field(default=(), kw_only=True)
    """The retries the reply took (a rate limit, an overloaded server), each with its wait."""
    type: Literal["model_response"] = field(default="model_response", init=False)

    @property
    def call_id(self) -> str:
        """Deprecated alias of `request_id` (kept for one release)."""
        return self.request_id


@dataclass(frozen=True)
class TextDeltaEvent:
    """Text streamed by the model while it answers."""

    text: str
    call: str = ""
    type: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(frozen=True)
class ToolCallEvent:
    """The agent is about to run a tool call (after the permission decision)."""

    tool_use: ToolUseBlock
    """The call as the model made it."""
    decision: Literal["allow", "deny"]
    """What the permission hook (or the approver) decided."""
    call: str = ""
    type: Literal["tool_call"] = field(default="tool_call", init=False)


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool call finished (an error result when the tool failed or was denied)."""

    tool_use: ToolUseBlock
    result: ToolResultBlock
    seconds: float
    """Wall time the tool took."""
    call: str = ""
    type: Literal["tool_result"] = field(default="tool_result", init=False)


@dataclass(frozen=True)
class CompactionEvent:
    """The working conversation was compacted (emitted only when it was)."""

    trigger: CompactionTrigger
    """What started it: the trigger line, `compress_context()`, the tool, an overflow, or an
    on-demand rule (``on_demand``: `asked` names it)."""
    record: CompactionRecord
    """How (``record.method``), messages compacted, attempts, errors."""
    call: str = ""
    type: Literal["compaction"] = field(default="compaction", init=False)

    @property
    def asked(self) -> AskRule | None:
        """The on-demand rule that asked (``task``, ``requests``, ``tokens``, ``idle``) when the
        trigger is ``on_demand``; None otherwise. The record's: one place says it."""
        return self.record.asked

    @property
    def method(self) -> CompactionMethod:
        """``summary``, or ``truncation`` when every summary attempt failed."""
        return self.record.method

    @property
    def kind(self) -> CompactionKind:
        """Deprecated: ``fallback`` for a truncation, else the trigger."""
        return "fallback" if self.record.method == "truncation" else self.trigger

    @property
    def tokens_before(self) -> int:
        """Summary + conversation tokens before."""
        return self.record.tokens_before

    @property
    def tokens_after(self) -> int:
        """Summary + conversation tokens after."""
        return self.record.tokens_after


@dataclass(frozen=True)
class ReplyEvent:
    """The call ended with the model's reply (a turn with no tool calls)."""

    message: AssistantMessage
    call: str = ""
    type: Literal["reply"] = field(default="reply", init=False)

    @property
    def text(self) -> str:
        """The reply's text."""
        return "".join(getattr(b, "text", "") for b in self.message.content)


@dataclass(frozen=True)
class ErrorEvent:
    """The call failed; the exception propagates after this event."""

    error: BaseException
    call: str = ""
    type: Literal["error"] = field(default="error", init=False)

    @property
    def message(self) -> str:
        """``ErrorType: message``."""
        return f"{type(self.error).__name__}: {self.error}"


@dataclass(frozen=True)
class TurnCommittedEvent:
    """A turn (the call's input, or one reasoning step) was committed to the session log."""

    turn: int
    """The turn's number in the session."""
    messages: int
    """Messages it added."""
    call: str = ""
    type: Literal["turn_committed"] = field(default="turn_committed", init=False)


Event = (
    ContextBuildEvent
    | ModelResponseEvent
    | TextDeltaEvent
    | ToolCallEvent
    | ToolResultEvent
    | CompactionEvent
    | ReplyEvent
    | ErrorEvent
    | TurnCommittedEvent
)
"""Any event of the agent."""


log = logging.getLogger("ctxlab.agent")


class Subscribers:
    """The callbacks that observe an agent's events."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[Event], Any]] = []

    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Add ``callback``; returns the function that removes it."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Hand ``event`` to every callback."""
        if not isinstance(event, Event):  # (a union: isinstance reads it)
            msg = f"an event is one of ctxlab.events' (ContextBuildEvent, ...), got {shown(event)}"
            raise UsageError(msg)
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:
                # A broken observer (a panel) must not break the agent; it is logged, not hidden.
                log.exception("event subscriber %r failed on %s", callback, event.type)
