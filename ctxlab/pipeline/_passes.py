"""Light conversation passes that run before summarizing: argument truncation and output pruning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.config._sections import MaskConfig, PruneConfig, TruncateArgsConfig
from ctxlab.manifest import Transform
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline._results import replace_results, with_text
from ctxlab.tokens import TokenCache

__all__ = ["PRUNE_NOTE", "prune_tool_output", "truncate_old_arguments"]

Conversation = tuple[UserMessage | AssistantMessage, ...]
PRUNE_NOTE = (
    "[... older tool output pruned to save context: {removed} characters of the output of "
    "tool call {id} removed ...]"
)


def truncate_old_arguments(
    conversation: Sequence[UserMessage | AssistantMessage],
    config: TruncateArgsConfig,
    conversation_tokens: int,
) -> tuple[Conversation, list[Transform]]:
    """Shorten long string arguments of tool calls older than the protected latest messages."""
    triggered = (
        len(conversation) >= config.trigger_messages or conversation_tokens >= config.trigger_tokens
    )
    if not triggered:
        return tuple(conversation), []
    transforms: list[Transform] = []
    end = max(len(conversation) - config.keep_messages, 0)
    out: list[UserMessage | AssistantMessage] = list(conversation)
    for index in range(end):
        message = conversation[index]
        if not isinstance(message, AssistantMessage) or not message.tool_uses:
            continue
        blocks: list[Any] = []
        changed = False
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                new_input = {
                    key: value[:20] + config.truncation_text
                    if isinstance(value, str) and len(value) > config.max_arg_length
                    else value
                    for key, value in block.input.items()
                }
                if new_input != block.input:
                    changed = True
                    transforms.append(Transform("args_truncation", block.id))
                    block = block.evolve(input=new_input)
            blocks.append(block)
        if changed:
            out[index] = AssistantMessage(content=tuple(blocks))
    return tuple(out), transforms


def prune_tool_output(
    conversation: Sequence[UserMessage | AssistantMessage],
    config: PruneConfig,
    cache: TokenCache,
) -> tuple[Conversation, list[Transform]]:
    """Replace older tool output by a preview when enough tokens can be freed.

    The latest ``protect_tokens`` of tool output are protected; the rest is pruned only when the
    savings reach ``minimum_prunable_tokens``.
    """
    protected = 0
    candidates: dict[int, int] = {}  # id(result) -> tokens saved
    savings = 0
    newest = True
    for message in reversed(conversation):
        if not isinstance(message, UserMessage) or not message.tool_results:
            continue
        if newest:
            # The newest output is never pruned, however large: the model has not read it yet.
            # If it does not fit, compaction cuts it by the documented rule (head + marker).
            newest = False
            protected = sum(cache.block(r) for r in message.tool_results)
            continue
        for result in reversed(message.tool_results):
            tokens = cache.block(result)
            if protected + tokens <= config.protect_tokens:
                protected += tokens
                continue
            protected = config.protect_tokens  # everything older is eligible
            text = result.text
            if len(text) <= config.preview_chars or "older tool output pruned" in text[-200:]:
                continue
            # The preview's count kept by value: a prune that waits for its savings runs again
            # at every step over the same older results.
            saved = tokens - cache.text(text[: config.preview_chars]) - 30
            if saved > 0:
                candidates[id(result)] = saved
                savings += saved
    if savings < config.minimum_prunable_tokens:
        return tuple(conversation), []
    transforms: list[Transform] = []

    def replace(result: ToolResultBlock) -> ToolResultBlock:
        if id(result) not in candidates:
            return result
        text = result.text
        note = PRUNE_NOTE.format(removed=len(text) - config.preview_chars, id=result.tool_use_id)
        new = with_text(result, f"{text[: config.preview_chars]}\n{note}")
        transforms.append(
            Transform(
                "tool_output_prune", result.tool_use_id, "", cache.block(result), cache.block(new)
            )
        )
        return new

    out = tuple(
        replace_results(m, replace) if isinstance(m, UserMessage) and m.tool_results else m
        for m in conversation
    )
    return out, transforms


def mask_observations(
    conversation: Sequence[UserMessage | AssistantMessage],
    config: MaskConfig,
    cache: TokenCache | None = None,
) -> tuple[Conversation, list[Transform]]:
    """Replace the tool outputs older than the latest ``keep_turns`` assistant turns by the
    placeholder (already masked outputs are left as they are, so the prefix stays stable) —
    only once they hold ``clear_at_least`` tokens (counted with ``cache``), all at once."""
    turns = [i for i, m in enumerate(conversation) if isinstance(m, AssistantMessage)]
    if len(turns) <= config.keep_turns:
        return tuple(conversation), []
    end = turns[-config.keep_turns]
    if config.clear_at_least and cache is not None:
        due = sum(
            cache.block(block)
            for message in conversation[:end]
            if isinstance(message, UserMessage)
            for block in message.tool_results
            if block.content != config.placeholder
        )
        if due < config.clear_at_least:
            return tuple(conversation), []
    out: list[UserMessage | AssistantMessage] = list(conversation)
    transforms: list[Transform] = []
    for index in range(end):
        message = conversation[index]
        if not isinstance(message, UserMessage) or not message.tool_results:
            continue
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.content != config.placeholder:
                transforms.append(Transform("observation_mask", block.tool_use_id))
                block = block.evolve(content=config.placeholder)
            blocks.append(block)
        out[index] = UserMessage(content=tuple(blocks))
    return tuple(out), transforms
