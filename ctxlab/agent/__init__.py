"""The agent loop: `Agent`, tools from functions, and the typed events."""

from ctxlab.agent._agent import Agent, Approver, PermissionHook
from ctxlab.agent._builtins import COMPRESS_TOOL, PROPOSE_TOOL, TODO_TOOL
from ctxlab.agent._export import SENT_RESULTS
from ctxlab.agent._forkpoint import ForkPoint, fork_point
from ctxlab.agent._playback import Playback, play, recorded_model, recorded_tools
from ctxlab.agent._step import ResultsTurn
from ctxlab.agent._tools import Tool, tool
from ctxlab.events import (
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

__all__ = [
    "COMPRESS_TOOL",
    "PROPOSE_TOOL",
    "SENT_RESULTS",
    "TODO_TOOL",
    "Agent",
    "Approver",
    "CompactionEvent",
    "CompactionKind",
    "ContextBuildEvent",
    "ErrorEvent",
    "Event",
    "ForkPoint",
    "ModelResponseEvent",
    "PermissionHook",
    "Playback",
    "ReplyEvent",
    "ResultsTurn",
    "TextDeltaEvent",
    "Tool",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnCommittedEvent",
    "fork_point",
    "play",
    "recorded_model",
    "recorded_tools",
    "tool",
]
