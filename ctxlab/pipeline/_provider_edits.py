"""The provider's own context editing, reproduced on the request ctxlab sends (stage 7, before
the layout): Anthropic's ``clear_tool_uses_20250919`` and ``clear_thinking_20251015`` (see
`ClearToolUses`, `ClearThinking`). The provider applies them to every request from the full
history it is sent, so ctxlab applies them to what is sent and never commits them to the
working state; the cleared blocks change their content hash, so the cost model sees the cached
prefix break where the first of them sits.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ctxlab.config._sections import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.manifest import Transform
from ctxlab.messages import (
    AssistantMessage,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._results import replace_results
from ctxlab.tokens import TokenCache

__all__ = [
    "COMPACTED",
    "TRUNCATED",
    "apply_provider_edits",
    "assistant_turns",
    "clear_thinking",
    "clear_tool_uses",
    "cleared_calls",
    "from_compaction_block",
    "has_compaction_block",
    "trim_tool_outputs",
    "truncate_oldest",
    "without_thinking",
]

Message = UserMessage | AssistantMessage


def apply_provider_edits(
    conversation: Sequence[Message],
    edits: ProviderEdits,
    cache: TokenCache,
    input_tokens: int,
    input_limit: int | None = None,
    *,
    server_compacted: bool = False,
) -> tuple[tuple[Message, ...], list[Transform]]:
    """The conversation as the provider's model sees it after ``edits``, and what they did;
    ``input_tokens`` is the whole request's estimate (what a token trigger compares),
    ``input_limit`` the request's limit (what truncation fits); ``server_compacted``: the
    conversation holds a server's compaction block (see `from_compaction_block`)."""
    out, transforms = tuple(conversation), []
    if server_compacted:
        out, done = from_compaction_block(out, cache)
        transforms.extend(done)
        input_tokens -= cache.messages(conversation) - cache.messages(out)
    if edits.clear_thinking is not None:
        out, done = clear_thinking(out, edits.clear_thinking)
        transforms.extend(done)
    if edits.clear_tool_uses is not None:
        out, done = clear_tool_uses(out, edits.clear_tool_uses, cache, input_tokens)
        transforms.extend(done)
    if edits.trim_tool_outputs is not None:
        out, done = trim_tool_outputs(out, edits.trim_tool_outputs)
        transforms.extend(done)
    if edits.openai_truncation and input_limit is not None:
        other = input_tokens - cache.messages(conversation)
        out, done = truncate_oldest(out, cache, input_limit - other)
        transforms.extend(done)
    return out, transforms


COMPACTED = (
    "[the conversation before this point was compacted by the provider into the block below]"
)
"""Opens a request sent from a server compaction block on (see `from_compaction_block`)."""


def has_compaction_block(message: Message) -> bool:
    """Whether ``message`` is an assistant turn holding a server's compaction block (Anthropic's
    ``compact_20260112`` writes ``{"type": "compaction", "content": ..., "encrypted_content":
    ...}``; ctxlab keeps it as a `ProviderBlock`, sent back byte for byte)."""
    # A loop, not `any` over a generator: every scan asks it of every assistant turn.
    if not isinstance(message, AssistantMessage):
        return False
    for block in message.content:
        if isinstance(block, ProviderBlock) and block.kind == "compaction":
            return True
    return False


def from_compaction_block(
    conversation: Sequence[Message], cache: TokenCache
) -> tuple[tuple[Message, ...], list[Transform]]:
    """The request from the latest compaction block on: the API "drops everything before it"
    (anthropic 2.14.0, ``beta_compaction_block.py``), so ctxlab sends, counts and prices only
    that — behind a stand-in user message (`COMPACTED`), as a request opens with a user turn."""
    for start in range(len(conversation) - 1, 0, -1):
        if has_compaction_block(conversation[start]):
            dropped = conversation[:start]
            detail = f"{start} messages, {cache.messages(dropped):,} tokens (server compaction)"
            kept = (UserMessage(content=COMPACTED), *conversation[start:])
            return kept, [Transform("provider_compaction", f"{start} messages", detail)]
    return tuple(conversation), []


TRUNCATED = "[the conversation before this point was dropped to fit the context window]"
"""Opens a request the provider's truncation cut: ctxlab's requests start with a user turn, and
OpenAI's may start anywhere, so a stand-in takes the place of what was dropped (the manifest
says so)."""


def truncate_oldest(
    conversation: Sequence[Message], cache: TokenCache, room: int
) -> tuple[tuple[Message, ...], list[Transform]]:
    """OpenAI's ``truncation: "auto"``: the oldest turns dropped until the rest fits ``room``
    tokens — whole turns, from an assistant turn on, so that no result is sent without its call
    — behind a stand-in user message (`TRUNCATED`). A request that no cut makes fit is left
    whole: the budget check refuses it."""
    total = cache.messages(conversation)
    if total <= room:
        return tuple(conversation), []
    opening = UserMessage(content=TRUNCATED)
    # ``left``: what the request would hold from ``start`` on, the stand-in included (the
    # conversation's cost beyond its messages stays in it, as the estimate counts it).
    left = total + cache.message(opening)
    for start, message in enumerate(conversation):
        if isinstance(message, AssistantMessage) and start > 0 and left <= room:
            removed = total - (left - cache.message(opening))
            detail = f"{start} oldest messages, {removed:,} tokens (truncation: auto)"
            kept = (opening, *conversation[start:])
            return kept, [Transform("provider_truncation", f"{start} messages", detail)]
        left -= cache.message(message)
    return tuple(conversation), []


def trim_tool_outputs(
    conversation: Sequence[Message], edit: TrimToolOutputs
) -> tuple[tuple[Message, ...], list[Transform]]:
    """``ToolOutputTrimmer``: the long outputs before the ``recent_turns``-th user message from
    the end become the SDK's trimmed preview."""
    spoken = [
        i
        for i, m in enumerate(conversation)
        if isinstance(m, UserMessage) and any(isinstance(b, TextBlock) for b in m.content)
    ]
    if len(spoken) < edit.recent_turns:
        return tuple(conversation), []
    boundary = spoken[-edit.recent_turns]
    names = {
        u.id: u.name for m in conversation if isinstance(m, AssistantMessage) for u in m.tool_uses
    }
    # Old: the results before the boundary message, and in it those before the user's words.
    old: set[str] = set()
    for index in range(boundary + 1):
        for block in conversation[index].content:
            if index == boundary and isinstance(block, TextBlock):
                break
            if isinstance(block, ToolResultBlock):
                old.add(block.tool_use_id)
    transforms: list[Transform] = []

    def trim(result: ToolResultBlock) -> ToolResultBlock:
        name = names.get(result.tool_use_id, "")
        if result.tool_use_id not in old or (
            edit.trimmable_tools is not None and name not in edit.trimmable_tools
        ):
            return result
        text = result.text
        summary = (
            f"[Trimmed: {name or 'unknown_tool'} output — {len(text)} chars → "
            f"{edit.preview_chars} char preview]\n{text[: edit.preview_chars]}..."
        )
        if len(text) <= edit.max_output_chars or len(summary) >= len(text):
            return result
        transforms.append(Transform("provider_trim_tool_output", result.tool_use_id, name))
        return result.evolve(content=summary)

    out = [
        replace_results(m, trim) if index <= boundary and isinstance(m, UserMessage) else m
        for index, m in enumerate(conversation)
    ]
    return tuple(out), transforms


def clear_tool_uses(
    conversation: Sequence[Message], edit: ClearToolUses, cache: TokenCache, input_tokens: int
) -> tuple[tuple[Message, ...], list[Transform]]:
    """``clear_tool_uses_20250919``: when the request exceeds the trigger, the results of all
    but the latest ``keep`` tool uses (not of ``exclude_tools``) become the placeholder — if at
    least ``clear_at_least`` tokens go."""
    uses = [b for m in conversation if isinstance(m, AssistantMessage) for b in m.tool_uses]
    fired = (
        edit.trigger_input_tokens is not None and input_tokens > edit.trigger_input_tokens
    ) or (edit.trigger_tool_uses is not None and len(uses) > edit.trigger_tool_uses)
    if not fired:
        return tuple(conversation), []
    older = uses[: max(len(uses) - edit.keep, 0)]
    due = {u.id: u for u in older if u.name not in edit.exclude_tools}
    inputs = set(due) if edit.clear_tool_inputs is True else set()
    if isinstance(edit.clear_tool_inputs, tuple):
        inputs = {i for i, u in due.items() if u.name in edit.clear_tool_inputs}
    cleared: dict[str, int] = {}  # call id -> tokens the clear removes
    for message in conversation:
        if isinstance(message, UserMessage):
            for result in message.tool_results:
                if result.tool_use_id in due and result.content != edit.placeholder:
                    # The result's framing stays: only its content becomes the placeholder.
                    left = cache.block(result.evolve(content=edit.placeholder))
                    cleared[result.tool_use_id] = max(cache.block(result) - left, 0)
    removed = sum(cleared.values())
    removed += sum(cache.block(due[i]) - cache.block(due[i].evolve(input={})) for i in inputs)
    if not cleared or removed < edit.clear_at_least:
        return tuple(conversation), []
    out = cleared_calls(conversation, set(cleared), inputs, edit.placeholder)
    detail = f"{len(cleared)} tool results, {removed:,} tokens (clear_tool_uses_20250919)"
    transforms = [Transform("provider_clear_tool_uses", call, detail) for call in cleared]
    return out, transforms


def cleared_calls(
    conversation: Sequence[Message],
    results: Collection[str],
    inputs: Collection[str],
    placeholder: str,
) -> tuple[Message, ...]:
    """``conversation`` with the results of the calls in ``results`` replaced by
    ``placeholder`` and the inputs of those in ``inputs`` emptied."""

    def clear(result: ToolResultBlock) -> ToolResultBlock:
        return result.evolve(content=placeholder) if result.tool_use_id in results else result

    out: list[Message] = []
    for message in conversation:
        if isinstance(message, UserMessage):
            message = replace_results(message, clear)
        elif isinstance(message, AssistantMessage) and any(
            u.id in inputs for u in message.tool_uses
        ):
            message = AssistantMessage(
                content=tuple(
                    b.evolve(input={}) if isinstance(b, ToolUseBlock) and b.id in inputs else b
                    for b in message.content
                )
            )
        out.append(message)
    return tuple(out)


def assistant_turns(conversation: Sequence[Message]) -> dict[int, int]:
    """The turn of each assistant message (by index): a turn is what the assistant does
    between two messages of the user — a tool loop is one turn, as the API's extended-thinking
    rules count it ("assistant conversation turns may include multiple content blocks (e.g.
    when using tools) and multiple thinking blocks (e.g. with interleaved thinking)": the
    context-editing guide)."""
    turn, turn_of = 0, {}
    for index, message in enumerate(conversation):
        if isinstance(message, UserMessage) and not message.tool_results:
            turn += 1  # the user spoke: the next assistant message opens a turn
        elif isinstance(message, AssistantMessage):
            turn_of[index] = turn
    return turn_of


def clear_thinking(
    conversation: Sequence[Message], edit: ClearThinking
) -> tuple[tuple[Message, ...], list[Transform]]:
    """``clear_thinking_20251015``: the thinking blocks of all but the latest ``keep_turns``
    assistant turns (see `assistant_turns`) are removed. A message that held only thinking is
    not sent at all: the API refuses an empty text block in its place, though the SDK's types
    accept one."""
    if edit.keep_turns is None:
        return tuple(conversation), []
    turn_of = assistant_turns(conversation)
    every = set(turn_of.values())
    cleared = every - set(sorted(every)[-edit.keep_turns :])
    out, turns = without_thinking(conversation, cleared)
    return out, [Transform("provider_clear_thinking", f"turn {turn}") for turn in turns]


THINKING = (ThinkingBlock, RedactedThinkingBlock)


def without_thinking(
    conversation: Sequence[Message], turns: Collection[int]
) -> tuple[tuple[Message, ...], list[int]]:
    """``conversation`` with the thinking of the assistant turns ``turns`` (see
    `assistant_turns`) removed, and the turn of each message that lost some. A message that
    held only thinking is not sent at all: the API refuses an empty text block in its place."""
    turn_of = assistant_turns(conversation)
    out: list[Message] = []
    touched: list[int] = []
    for index, message in enumerate(conversation):
        if turn_of.get(index) in turns and any(isinstance(b, THINKING) for b in message.content):
            touched.append(turn_of[index])
            left = tuple(b for b in message.content if not isinstance(b, THINKING))
            if not left:
                continue
            message = AssistantMessage(content=left)
        out.append(message)
    return tuple(out), touched
