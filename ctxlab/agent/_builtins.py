"""The agent's built-in tools: their names and schemas (CompressContext, todo_write,
propose_requirement)."""

from __future__ import annotations

from ctxlab.messages._request import ToolSchema

__all__ = [
    "BUILTIN_TOOLS",
    "COMPRESS_SCHEMA",
    "COMPRESS_TOOL",
    "MODE_SCHEMA",
    "MODE_TOOL",
    "PROPOSE_SCHEMA",
    "PROPOSE_TOOL",
    "RECEIPT",
    "SHORTENED_RECEIPT",
    "TODO_SCHEMA",
    "TODO_TOOL",
]

COMPRESS_TOOL = "CompressContext"
COMPRESS_SCHEMA = ToolSchema(
    COMPRESS_TOOL,
    "Summarize the earlier conversation now, at a boundary between two pieces of work, so the "
    "details still in flight are kept. Only has an effect once the context-usage notice appears.",
    {
        "type": "object",
        "properties": {
            "instructions": {
                "type": "string",
                "description": "What the summary must keep (paths, decisions, open questions).",
            }
        },
        "additionalProperties": False,
    },
)


TODO_TOOL = "todo_write"
TODO_SCHEMA = ToolSchema(
    TODO_TOOL,
    "Replace your todo list with the full, current list. Mark one item in_progress while you "
    "work on it and completed when done; the current list is shown to you at every step.",
    {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"enum": ["pending", "in_progress", "completed"]},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
)
PROPOSE_TOOL = "propose_requirement"
PROPOSE_SCHEMA = ToolSchema(
    PROPOSE_TOOL,
    "Propose an acceptance criterion for the task; the user confirms or rejects it.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
MODE_TOOL = "switch_mode"
MODE_SCHEMA = ToolSchema(
    MODE_TOOL,
    "Switch between PLAN mode (read, think, write the plan) and BUILD mode (carry it out).",
    {
        "type": "object",
        "properties": {
            "mode": {"enum": ["plan", "build"]},
            "plan_path": {"type": "string", "description": "Where the plan is kept."},
        },
        "required": ["mode"],
    },
)
BUILTIN_TOOLS = frozenset({COMPRESS_TOOL, TODO_TOOL, PROPOSE_TOOL, MODE_TOOL})
"""Names a user's tool may not take."""
RECEIPT = "Todo list updated (revision {revision}):\n{todos}"
SHORTENED_RECEIPT = "[an earlier todo list, superseded; the current one is shown below]"
