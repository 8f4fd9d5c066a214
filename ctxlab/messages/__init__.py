"""Messages and content blocks, and their JSON form.

Provider wire formats live with their adapters: the Anthropic Messages format is in
`ctxlab.models` (``messages_from_anthropic``, ``messages_to_anthropic``, ...).
"""

from typing import Any

from ctxlab.messages._blocks import (
    ANTHROPIC_BLOCK_TYPES,
    HINT_CLOSE,
    HINT_OPEN,
    NOT_IN_ROLE,
    RESULT_PART_TYPES,
    AssistantBlock,
    Base64ImageSource,
    ContentBlock,
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ImageSource,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UrlImageSource,
    UserBlock,
)
from ctxlab.messages._messages import (
    MESSAGE_ADAPTER,
    MESSAGES_ADAPTER,
    AssistantMessage,
    Message,
    ToolPairProblem,
    ToolPairScanner,
    UserMessage,
    dump_messages,
    find_tool_pair_problems,
    parse_messages,
    request_start,
    tool_names,
)
from ctxlab.messages._repair import repair_conversation
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import CompactionMethod, Summary, WorkingState
from ctxlab.messages._text import DECODE_NOTE, clean_text, decoded_output
from ctxlab.messages._usage import MAX_TOKENS, ProviderUsage

__all__ = [
    "ANTHROPIC_BLOCK_TYPES",
    "DECODE_NOTE",
    "HINT_CLOSE",
    "HINT_OPEN",
    "MAX_TOKENS",
    "MESSAGES_ADAPTER",
    "MESSAGE_ADAPTER",
    "NOT_IN_ROLE",
    "RESULT_PART_TYPES",
    "AssistantBlock",
    "AssistantMessage",
    "Base64ImageSource",
    "CompactionMethod",
    "ContentBlock",
    "DocumentBlock",
    "HintBlock",
    "ImageBlock",
    "ImageSource",
    "Message",
    "ModelRequest",
    "ProviderBlock",
    "ProviderUsage",
    "RedactedThinkingBlock",
    "Summary",
    "TextBlock",
    "ThinkingBlock",
    "ToolPairProblem",
    "ToolPairScanner",
    "ToolResultBlock",
    "ToolSchema",
    "ToolUseBlock",
    "UrlImageSource",
    "UserBlock",
    "UserMessage",
    "WorkingState",
    "clean_text",
    "decoded_output",
    "dump_messages",
    "find_tool_pair_problems",
    "parse_messages",
    "repair_conversation",
    "request_start",
    "tool_names",
]

MOVED: dict[str, Any] = {}
"""Deprecated aliases (one release): names that moved to ``ctxlab.models`` with the Anthropic
format, registered there when it loads (this package imports no adapter)."""


def __getattr__(name: str) -> Any:
    if name in MOVED:
        import warnings

        warnings.warn(
            f"ctxlab.messages.{name} moved to ctxlab.models.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return MOVED[name]
    msg = f"module 'ctxlab.messages' has no attribute {name!r}"
    raise AttributeError(msg)
