"""The pinned task: the user's first message, kept verbatim beside every summary (and carried
from summary to summary); a message too large for its share of the window is pinned cut at a
line end, the cut said, and left to the summary only when not even a few of its lines fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.messages._state import Summary
from ctxlab.pipeline._summary_calls import MIN_SUMMARY_BUDGET
from ctxlab.tokens import TokenCache

if TYPE_CHECKING:
    from ctxlab.pipeline._compaction import ReductionLimits

__all__ = [
    "PINNED_TASK_SHARE",
    "USER_MESSAGE_BREAK",
    "fit_task",
    "pinned_task",
    "summary_text",
    "task_tokens",
    "user_messages",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]

PINNED_TASK_SHARE = 0.4
"""The user's first message is kept verbatim beside the summary up to this share of the input
limit (a larger one is pinned cut at a line end to the share, with a note saying how many lines
are left out)."""

TASK_HEADING = "<system-info>The user's first message (the task), kept verbatim:\n"
TASK_END = "</system-info>"
USER_MESSAGE_BREAK = "\n\n---\n\n"
"""Between the user's messages when all of them are pinned (``pin_user_messages``)."""


USER_MESSAGES_HEADING = "<system-info>The user's messages (the first is the task), kept verbatim:\n"


def _heading(task: str) -> str:
    # Pinned user messages are joined by the break; one pinned first message has none.
    return USER_MESSAGES_HEADING if USER_MESSAGE_BREAK in task else TASK_HEADING


def task_tokens(task: str | None, cache: TokenCache) -> int:
    """Tokens the pinned ``task`` adds to the summary message (0 without one)."""
    return cache.text(_heading(task) + task + TASK_END) if task is not None else 0


def summary_text(rendered: str, task: str | None) -> str:
    """What the model sees of a summary: the summary, then the pinned task (when there is one)."""
    return f"{rendered}\n\n{_heading(task)}{task}{TASK_END}" if task else rendered


def pinned_task(
    conversation: Conversation, summary: Summary | None, cache: TokenCache, limits: ReductionLimits
) -> str | None:
    """The user's first message, kept verbatim beside every summary: carried from the standing
    summary, or read from the conversation at the first compaction. Larger than
    `PINNED_TASK_SHARE` of the input limit, its first lines are pinned (the task comes first at
    a small window: a summary's budget would hold far fewer), the cut said; None when not even
    a few lines fit (the summary then states the task)."""
    if summary is not None:
        return summary.task or None
    first = conversation[0] if conversation else None
    if not isinstance(first, UserMessage) or first.tool_results:
        return None
    text = _words_of(first)
    if not text:
        return None
    return _cut_task(text, int(limits.input_limit * PINNED_TASK_SHARE), cache)


def user_messages(prefix: Conversation, summary: Summary | None) -> str | None:
    """Every user message's own words in ``prefix`` (tool results are not the user's), after
    those the standing summary already pins: what OpenAI's compaction keeps verbatim."""
    texts = [summary.task] if summary is not None and summary.task else []
    texts.extend(filter(None, (_words_of(m) for m in prefix if isinstance(m, UserMessage))))
    return USER_MESSAGE_BREAK.join(texts) or None


def _words_of(message: UserMessage) -> str:
    """A user message's own text (its text blocks; not the tool results it carries)."""
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


def fit_task(
    task: str, tail: Conversation, limits: ReductionLimits, cache: TokenCache
) -> tuple[str | None, int]:
    """The pinned task beside this tail, and the room left for summary and tail. A latest turn
    too large to leave the task its room cuts it at a line end to what is left (the summary's
    smallest budget kept free), or unpins it."""
    left = limits.input_limit - limits.fixed_tokens - cache.messages(tail) - MIN_SUMMARY_BUDGET
    fitted = _cut_task(task, left - 64, cache)
    return fitted, limits.input_limit - limits.fixed_tokens - task_tokens(fitted, cache)


def _cut_task(task: str, room: int, cache: TokenCache) -> str | None:
    """``task`` whole when it fits ``room`` tokens, else its first lines that do (with a note
    saying how many were left out); None when not even a few lines fit."""
    if task_tokens(task, cache) <= room:
        return task
    lines = task.splitlines()
    kept: list[str] = []
    used = cache.text(_heading(task) + TASK_END) + 24
    for line in lines:
        used += cache.text(line) + 1
        if used > room:
            break
        kept.append(line)
    if len(kept) < 3:
        return None
    return "\n".join(kept) + f"\n[the first message continues for {len(lines) - len(kept)} lines]"
