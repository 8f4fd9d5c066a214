"""Messages and content blocks, their JSON form and the Anthropic Messages format."""

from ctxlab.messages._anthropic import (
    messages_from_anthropic,
    messages_to_anthropic,
    to_anthropic_block,
)
from ctxlab.messages._blocks import (
    AssistantBlock,
    Base64ImageSource,
    ContentBlock,
    HintBlock,
    ImageBlock,
    ImageSource,
    TextBlock,
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
)

__all__ = [
    "MESSAGES_ADAPTER",
    "MESSAGE_ADAPTER",
    "AssistantBlock",
    "AssistantMessage",
    "Base64ImageSource",
    "ContentBlock",
    "HintBlock",
    "ImageBlock",
    "ImageSource",
    "Message",
    "TextBlock",
    "ToolPairProblem",
    "ToolPairScanner",
    "ToolResultBlock",
    "ToolUseBlock",
    "UrlImageSource",
    "UserBlock",
    "UserMessage",
    "dump_messages",
    "find_tool_pair_problems",
    "messages_from_anthropic",
    "messages_to_anthropic",
    "parse_messages",
    "to_anthropic_block",
]
