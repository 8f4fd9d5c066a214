"""The events of an agent run, below the agent that emits them: the step sources (replay,
observed frameworks) emit the same events without importing the agent."""

from ctxlab.events._events import (
    CompactionEvent,
    CompactionKind,
    ContextBuildEvent,
    ErrorEvent,
    Event,
    ModelResponseEvent,
    ReplyEvent,
    Subscribers,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnCommittedEvent,
)

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
