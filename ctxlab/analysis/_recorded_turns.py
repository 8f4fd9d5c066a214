"""What each recorded request sends (`ctxlab.analysis._recorded`): its segment of the
conversation (after a compaction, the summary opening it; results a microcompact cleared as the
placeholder), and, where a provider reads only the current user turn's reasoning (the OpenAI
Responses API, as Codex accounts for it), the replies before that turn without theirs."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ctxlab.messages import (
    AssistantMessage,
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    UserMessage,
)

__all__ = [
    "CLEARED",
    "EARLIER_REASONING_DROPPED",
    "REASONING_BLOCKS",
    "opens_turn",
    "sent_by",
    "without_reasoning",
]


EARLIER_REASONING_DROPPED = "earlier_reasoning_dropped"
"""``transcript.meta`` key: true where the provider reads the reasoning of the current user turn
only and drops that of earlier turns, though the agent sends it all back (OpenAI's Responses API,
as Codex accounts for it: ``ctxlab.io.formats.codex.parse``)."""


def opens_turn(message: Message) -> bool:
    """Whether ``message`` is the user speaking (not only tool results): a new user turn."""
    return isinstance(message, UserMessage) and any(
        not isinstance(b, ToolResultBlock) for b in message.content
    )


def without_reasoning(
    sent: tuple[Message, ...], turn: int, stripped: dict[int, Message], offset: int
) -> tuple[Message, ...]:
    """``sent`` as the requests of the user turn opening at ``turn`` are read: the reasoning of
    the replies before it dropped, the turn's own kept. A reply that held only reasoning stays,
    empty, so indexes keep their place. ``stripped`` keeps each reply without its reasoning
    once (by index + ``offset``), for every later turn to share."""
    out = list(sent)
    for i in range(min(turn, len(out))):
        message = out[i]
        if isinstance(message, AssistantMessage) and any(
            isinstance(b, REASONING_BLOCKS) for b in message.content
        ):
            if i + offset not in stripped:
                kept = tuple(b for b in message.content if not isinstance(b, REASONING_BLOCKS))
                stripped[i + offset] = AssistantMessage(content=kept)
            out[i] = stripped[i + offset]
    return tuple(out)


REASONING_BLOCKS = (ThinkingBlock, RedactedThinkingBlock)
"""The blocks a provider that reads the current user turn's reasoning only drops from earlier
turns."""


CLEARED = "[Old tool result content cleared]"
"""What Claude Code sends in place of a result a microcompact cleared."""


def sent_by(
    messages: Sequence[Message],
    key: tuple[int, int, int],
    opening: Message | None,
    cleared: set[str],
    turns: tuple[list[int], dict[int, Message]] | None,
) -> tuple[Message, ...]:
    """The messages the requests of segment ``key`` (segment, start, turn) send: with
    ``turns`` (the indexes that open a user turn, the replies already stripped), those of the
    user turn ``key[2]`` — cut at the next turn, which its requests never reach, the reasoning
    of earlier turns dropped."""
    _, start, turn = key
    if turns is None:
        return _segment(messages, start, opening, cleared)
    openers, stripped = turns
    after = bisect.bisect_right(openers, turn)
    end = openers[after] if after < len(openers) else len(messages)
    sent = _segment(messages, start, opening, cleared, end)
    return without_reasoning(sent, turn - start, stripped, start)


def _segment(
    messages: Sequence[Message],
    start: int,
    opening: Message | None,
    cleared: set[str],
    end: int | None = None,
) -> tuple[Message, ...]:
    """The messages from ``start`` (to ``end``) as the requests of one segment send them: the
    summary's blocks opening it after a compaction, the results a microcompact cleared
    replaced."""
    sent = tuple(messages[start:end])
    if opening is not None and sent:
        sent = (opening, *sent[1:])
    if cleared:
        sent = tuple(_cleared(m, cleared) for m in sent)
    return sent


def _cleared(message: Message, cleared: set[str]) -> Message:
    if not isinstance(message, UserMessage) or not any(
        r.tool_use_id in cleared for r in message.tool_results
    ):
        return message
    content = tuple(
        b.evolve(content=CLEARED)
        if isinstance(b, ToolResultBlock) and b.tool_use_id in cleared
        else b
        for b in message.content
    )
    return UserMessage(content=content)
