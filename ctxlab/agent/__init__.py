"""The agent loop: `Agent`, tools from functions, and the typed events."""

from ctxlab.agent._agent import COMPRESS_TOOL, Agent, Approver, PermissionHook
from ctxlab.agent._events import (
    CompactionEvent,
    CompactionKind,
    ContextBuildEvent,
    ErrorEvent,
    Event,
    ModelResponseEvent,
    ReplyEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnCommittedEvent,
)
from ctxlab.agent._tools import Tool, tool

__all__ = [
    "COMPRESS_TOOL",
    "Agent",
    "Approver",
    "CompactionEvent",
    "CompactionKind",
    "ContextBuildEvent",
    "ErrorEvent",
    "Event",
    "ModelResponseEvent",
    "PermissionHook",
    "ReplyEvent",
    "TextDeltaEvent",
    "Tool",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnCommittedEvent",
    "tool",
]
