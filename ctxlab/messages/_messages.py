"""Messages: a user or assistant turn holding content blocks, and their (de)serialization."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.messages._blocks import (
    AssistantBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserBlock,
)
from ctxlab.messages._frozen import Frozen, derived
from ctxlab.util._checks import shown

__all__ = [
    "MESSAGES_ADAPTER",
    "MESSAGE_ADAPTER",
    "AssistantMessage",
    "Message",
    "ToolPairProblem",
    "ToolPairScanner",
    "UserMessage",
    "dump_messages",
    "find_tool_pair_problems",
    "parse_messages",
    "request_start",
    "tool_names",
]


def _text_to_blocks(value: Any) -> Any:
    if isinstance(value, str):
        return (TextBlock(text=value),)
    if isinstance(value, list):
        return tuple(value)
    return value


class _Message(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @derived
    def content_hash(self) -> str:
        """A stable hash of the role and every block (16 hex digits of SHA-256)."""
        role: str = getattr(self, "role")  # noqa: B009 - declared by the subclasses
        blocks: tuple[Any, ...] = getattr(self, "content")  # noqa: B009
        joined = role + ":" + ",".join(block.content_hash for block in blocks)
        return hashlib.sha256(joined.encode()).hexdigest()[:16]


class UserMessage(_Message):
    """A user turn: the user's words, images, tool results and harness hints.

    ``content`` also accepts a plain string: ``UserMessage(content="hi")``.
    """

    role: Literal["user"] = "user"
    content: tuple[UserBlock, ...]
    """The blocks of the turn, in order."""

    _to_blocks = field_validator("content", mode="before")(_text_to_blocks)

    @derived
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        """The tool results carried by this turn."""
        # A list made, then a tuple: no generator (read once per message by every scan).
        return tuple([b for b in self.content if isinstance(b, ToolResultBlock)])

    @derived
    def image_count(self) -> int:
        """Images in this turn, inside tool results included."""
        # One pass over the blocks, no tuple built (`ToolResultBlock.images` of each result, the
        # direct images): the scans read it once per message, a third of a turn's first reads.
        count = 0
        for block in self.content:
            if isinstance(block, ImageBlock):
                count += 1
            elif isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
                count += sum([isinstance(part, ImageBlock) for part in block.content])
        return count

    @derived
    def longest_result_chars(self) -> int:
        """Characters of the longest tool result text in this turn (0 without results)."""
        return max((len(r.text) for r in self.tool_results), default=0)


class AssistantMessage(_Message):
    """An assistant turn: text and tool calls."""

    role: Literal["assistant"] = "assistant"
    content: tuple[AssistantBlock, ...]
    """The blocks of the turn, in order."""

    _to_blocks = field_validator("content", mode="before")(_text_to_blocks)

    @derived
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls requested in this turn."""
        return tuple([b for b in self.content if isinstance(b, ToolUseBlock)])  # (no generator)


Message = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]
"""A user or assistant message, discriminated by ``role``."""

MESSAGE_ADAPTER: TypeAdapter[UserMessage | AssistantMessage] = TypeAdapter(Message)
MESSAGES_ADAPTER: TypeAdapter[list[UserMessage | AssistantMessage]] = TypeAdapter(list[Message])


def parse_messages(data: Iterable[Any]) -> list[UserMessage | AssistantMessage]:
    """Validate ctxlab-format message dicts (or JSON-decoded lists) into messages.

    Raises `MessageFormatError` naming the message index and the field at fault.
    """
    if isinstance(data, str | bytes | Mapping) or not isinstance(data, Iterable):
        msg = f"messages must be a list of messages or message dicts, got {shown(data)}"
        raise UsageError(msg)
    result: list[UserMessage | AssistantMessage] = []
    for index, item in enumerate(data):
        if isinstance(item, UserMessage | AssistantMessage):
            result.append(item)
            continue
        try:
            result.append(MESSAGE_ADAPTER.validate_python(item))
        except ValidationError as exc:
            msg = f"message {index} is malformed: {_describe(exc)}"
            raise MessageFormatError(msg) from exc
    return result


def dump_messages(messages: Iterable[UserMessage | AssistantMessage]) -> list[dict[str, Any]]:
    """Messages as JSON-ready dicts; `parse_messages` reads them back unchanged."""
    return [m.model_dump(mode="json") for m in messages]


def _describe(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "message"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    hint = (
        " A message is {'role': 'user'|'assistant', 'content': str | list of blocks}; blocks have"
        " 'type' text, image, tool_use, tool_result, hint, thinking, redacted_thinking, document"
        " or provider."
    )
    return f"{where}: {first['msg']}{more}.{hint}"


@dataclass(frozen=True, slots=True)
class ToolPairProblem:
    """One broken tool exchange found in a conversation."""

    kind: Literal["orphan_result", "missing_result", "duplicate_id"]
    """What is wrong."""
    tool_use_id: str
    """The call id concerned."""
    message_index: int
    """The index of the message where the problem shows."""

    def __str__(self) -> str:
        if self.kind == "orphan_result":
            return (
                f"message {self.message_index}: tool_result for '{self.tool_use_id}' has no "
                "tool_use in the assistant message just before it"
            )
        if self.kind == "missing_result":
            return (
                f"message {self.message_index}: tool_use '{self.tool_use_id}' has no "
                "tool_result in the user message that follows it"
            )
        return f"message {self.message_index}: tool_use id '{self.tool_use_id}' is used twice"


class ToolPairScanner:
    """Checks tool exchanges message by message, so a growing conversation is scanned once.

    The Anthropic rule: the results of an assistant turn's calls open the next user turn.
    """

    __slots__ = ("index", "pending", "problems", "seen")

    def __init__(self) -> None:
        self.index = 0
        self.pending: dict[str, int] = {}
        self.seen: set[str] = set()
        self.problems: list[ToolPairProblem] = []

    def copy(self) -> ToolPairScanner:
        """An independent scanner in the same position."""
        other = ToolPairScanner()
        other.index = self.index
        other.pending = dict(self.pending)
        other.seen = set(self.seen)
        other.problems = list(self.problems)
        return other

    def feed(self, messages: Iterable[UserMessage | AssistantMessage]) -> ToolPairScanner:
        """Scan more messages (continuing the numbering); returns self."""
        problems = self.problems
        for message in messages:
            index = self.index
            self.index += 1
            if isinstance(message, AssistantMessage):
                if self.pending:  # (most turns: the calls before were answered)
                    problems.extend(
                        ToolPairProblem("missing_result", tid, at)
                        for tid, at in self.pending.items()
                    )
                    self.pending = {}
                for use in message.tool_uses:
                    if use.id in self.seen:
                        problems.append(ToolPairProblem("duplicate_id", use.id, index))
                    self.seen.add(use.id)
                    self.pending[use.id] = index
                continue
            for result in message.tool_results:
                if self.pending.pop(result.tool_use_id, None) is None:
                    problems.append(ToolPairProblem("orphan_result", result.tool_use_id, index))
            if self.pending:
                problems.extend(
                    ToolPairProblem("missing_result", tid, at) for tid, at in self.pending.items()
                )
                self.pending = {}
        return self

    def finish(self, *, allow_unfinished: bool = False) -> list[ToolPairProblem]:
        """The problems found; calls still pending count unless ``allow_unfinished``."""
        if self.pending and not allow_unfinished:
            return [
                *self.problems,
                *(ToolPairProblem("missing_result", tid, at) for tid, at in self.pending.items()),
            ]
        return list(self.problems)


def tool_names(conversation: Iterable[UserMessage | AssistantMessage]) -> dict[str, str]:
    """The tool name of every call in ``conversation``, by call id (a tool result names only
    its call's id)."""
    return {
        use.id: use.name
        for m in conversation
        if isinstance(m, AssistantMessage)
        for use in m.tool_uses
    }


def find_tool_pair_problems(
    messages: Sequence[UserMessage | AssistantMessage], *, allow_unfinished: bool = False
) -> list[ToolPairProblem]:
    """Check that every tool_use has its result in the next user turn and every result its call.

    With ``allow_unfinished``, calls of the final assistant message may lack results (they are
    still running).
    """
    return ToolPairScanner().feed(messages).finish(allow_unfinished=allow_unfinished)


def request_start(messages: Sequence[UserMessage | AssistantMessage]) -> int:
    """The index of the first message a request can start from: the first user message that
    answers no call made before it (``len(messages)`` when there is none).

    A recording may open with replies — a continued session, an export that lost the prompt, an
    agent file whose history starts with the agent's own call — and no request can start with a
    reply, nor with a result whose call it does not hold. Those replies are never requested; the
    conversation is replayed from here.
    """
    earlier: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            earlier.update(use.id for use in message.tool_uses)
        elif not any(result.tool_use_id in earlier for result in message.tool_results):
            return index
    return len(messages)
