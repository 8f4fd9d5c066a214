"""`prepare`: the preparation pipeline, stages 1–8, from working state to a validated request.

A deterministic function of (working state, config, materials, counter, summarizer). It returns the
request, its manifest and the candidate working state; the caller commits that state only when
validation passed. Failures raise a `PreparationError` that carries the failed manifest.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from ctxlab._config import ContextConfig
from ctxlab._request import ModelRequest, ToolSchema
from ctxlab._state import Summary, WorkingState
from ctxlab.exceptions import (
    ContextBudgetExceeded,
    InvalidToolPairs,
    PreparationError,
)
from ctxlab.manifest import ContextManifest, ManifestItem, Transform, Validation
from ctxlab.materials import ContextBlock, Material, Materials
from ctxlab.messages import AssistantMessage, TextBlock, ToolPairScanner, UserMessage
from ctxlab.pipeline._budget import input_limit, omit_for_budget
from ctxlab.pipeline._compaction import (
    CompactionRecord,
    Reduction,
    ReductionLimits,
    compaction_due,
    reduce_conversation,
    summary_tokens,
)
from ctxlab.pipeline._offload import Offloader
from ctxlab.pipeline._scan import message_items, scan_conversation
from ctxlab.pipeline._summary import Summarizer
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache, TokenCounter

__all__ = ["Preparation", "Purpose", "prepare", "token_cache_for"]

Purpose = Literal["reasoning", "compaction", "recovery", "summary"]
"""Why a request is prepared: a reasoning step, a (manual or agentic) compaction, an overflow
recovery, or a summary request."""

_caches: weakref.WeakKeyDictionary[Any, TokenCache] = weakref.WeakKeyDictionary()


def token_cache_for(counter: TokenCounter | TokenCache) -> TokenCache:
    """The shared `TokenCache` of a counter (created on first use), or the cache itself."""
    if isinstance(counter, TokenCache):
        return counter
    cache = _caches.get(counter)
    if cache is None:
        cache = _caches[counter] = TokenCache(counter)
    return cache


@dataclass(frozen=True)
class Preparation:
    """The result of a successful preparation."""

    request: ModelRequest
    """What to send to the model."""
    manifest: ContextManifest
    """What the request contains and how it was built."""
    state: WorkingState
    """The candidate working state (compacted, truncated); commit it once the request is sent."""
    compaction: CompactionRecord | None = None
    """The compaction this preparation performed, if any."""


def usage_notice(total: int, context_size: int, trigger: int, tool_enabled: bool) -> str:
    """The runtime note telling the agent how full its context is."""
    note = (
        f"Context usage: {total} of {context_size} tokens ({100 * total / context_size:.0f}%). "
        f"The conversation is compacted automatically above {trigger} tokens."
    )
    if tool_enabled:
        note += (
            " You may call the CompressContext tool now, at a boundary between two pieces of "
            "work, to summarize earlier history on your own terms."
        )
    return note


class _Builder:
    """Per-call working data of `prepare`; keeps the stages readable."""

    def __init__(self, cache: TokenCache) -> None:
        self.cache = cache
        self.transforms: list[Transform] = []

    def material_tokens(self, materials: Sequence[Material]) -> dict[str, int]:
        return {m.item_id: self.cache.text(m.render()) + MESSAGE_OVERHEAD for m in materials}


def _material_item(material: Material, tokens: int) -> ManifestItem:
    block = material.block
    return ManifestItem(
        id=material.item_id,
        kind=material.category
        if material.category != "source"
        else ("runtime" if block.placement == "transient" else "reference"),
        placement=block.placement,
        tokens=tokens,
        content_hash=block.content_hash,
        source_id=material.source_id,
        revision=block.revision or block.content_hash,
    )


def _layout(
    summary: Summary | None,
    conversation: Sequence[UserMessage | AssistantMessage],
    materials: Sequence[Material],
) -> tuple[UserMessage | AssistantMessage, ...]:
    messages: list[UserMessage | AssistantMessage] = []
    if summary is not None:
        messages.append(UserMessage(content=(TextBlock(text=summary.text),)))
    messages.extend(conversation)
    for placement in ("transient", "references"):
        blocks = [TextBlock(text=m.render()) for m in materials if m.block.placement == placement]
        if blocks:
            messages.append(UserMessage(content=tuple(blocks)))
    return tuple(messages)


async def prepare(
    state: WorkingState,
    *,
    context_window: int | None,
    counter: TokenCounter | TokenCache,
    config: ContextConfig | None = None,
    materials: Materials | None = None,
    tools: Sequence[ToolSchema] = (),
    summarizer: Summarizer | None = None,
    offloader: Offloader | None = None,
    purpose: Purpose = "reasoning",
    call_id: str | None = None,
    model: str = "",
    previous: ContextManifest | None = None,
    force_compaction: bool = False,
    compaction_threshold: int | None = None,
    instructions: str | None = None,
    projection: Callable[[Sequence[UserMessage | AssistantMessage]], Sequence[Material]]
    | None = None,
) -> Preparation:
    """Prepare the next model request from ``state``.

    Stages, in order: materials, images, tool results, budget, conversation reduction,
    projection, layout, validation. ``compaction_threshold`` replaces the trigger line for this
    call (the CompressContext tool compacts from the usage-notice line); ``force_compaction``
    compacts whatever the size (overflow recovery). ``projection`` returns the task-state
    material for the reduced conversation (never omitted). Raises `InvalidToolPairs`,
    `ContextBudgetExceeded` or `CompressionError`, each carrying the failed manifest.
    """
    config = config or ContextConfig()
    materials = materials or Materials()
    cache = token_cache_for(counter)
    build = _Builder(cache)
    call_id = call_id or uuid.uuid4().hex[:16]
    context_size = context_window or config.budget.unknown_window_input_limit
    # The lines depend only on the (frozen) config and the window: computed once per change.
    memo = cache.memo.get("lines")
    if memo is not None and memo[0] is config and memo[1] == context_window:
        limit, lines, trigger, thresholds = memo[2:]
    else:
        limit = input_limit(context_window, config.budget)
        lines = config.thresholds(context_size)
        trigger = min(lines["trigger_tokens"], limit)
        thresholds = MappingProxyType({**lines, "trigger_tokens": trigger, "input_limit": limit})
        cache.memo["lines"] = (config, context_window, limit, lines, trigger, thresholds)

    def manifest(
        items: Sequence[ManifestItem],
        validation: Validation,
        error: str | None = None,
        estimated: int = -1,
    ) -> ContextManifest:
        # An early failure has no statistics: -1 tokens and an "unavailable" method.
        return ContextManifest(
            call_id=call_id,
            purpose=purpose,
            model=model,
            estimated_input_tokens=estimated,
            input_limit=limit,
            counting_method=cache.method if items else "unavailable",
            exact=cache.exact and bool(items),
            items=tuple(items),
            transforms=tuple(build.transforms),
            validation=validation,
            context_size=context_size,
            thresholds=thresholds,
            error=error,
            previous_items=previous.items if previous is not None else None,
        )

    # 1. Materials: System parts and tool schemas are fixed; loading failures become transforms.
    # Their items are rebuilt only when they change (compared by identity first, then value).
    tools = tuple(tools)
    memo = cache.memo.get("fixed")
    if memo is not None and memo[0] == materials.system and memo[1] == tools:
        system_items, tool_items, fixed, system_text = memo[2:]
    else:
        system_items = [
            ManifestItem(
                f"system/{p.name}",
                "system",
                "system",
                cache.text(p.text) + MESSAGE_OVERHEAD,
                cache.text_hash(p.text),
                None,
                None,
            )
            for p in materials.system
        ]
        tool_items = [
            ManifestItem(
                f"tool/{t.name}",
                "tool_schema",
                "tools",
                cache.text(t.rendered),
                cache.text_hash(t.rendered),
            )
            for t in tools
        ]
        fixed = sum(i.tokens for i in system_items) + sum(i.tokens for i in tool_items)
        system_text = "\n\n".join(p.text for p in materials.system)
        cache.memo["fixed"] = (
            materials.system,
            tools,
            system_items,
            tool_items,
            fixed,
            system_text,
        )
    build.transforms.extend(
        Transform("source_unavailable", source, reason) for source, reason in materials.failures
    )

    # 2. Images, 3. tool results: applied to the working conversation (new messages only when
    # the conversation extends the one prepared last).
    scan, moved = scan_conversation(state.conversation, config, offloader, cache)
    build.transforms.extend(moved)
    conversation = scan.conversation

    # 4. Budget: optional material gives way when it would starve the conversation below the
    # tail a compaction keeps.
    kept: list[Material] = list(materials.blocks)
    tokens = build.material_tokens(kept)
    previous_summary = summary_tokens(state.summary, cache)
    floor = min(scan.tokens, lines["reserve_tokens"]) + previous_summary
    excess = fixed + sum(tokens.values()) + floor - limit
    if excess > 0:
        kept, omitted = omit_for_budget(kept, tokens, excess)
        build.transforms.extend(omitted)
    material = sum(tokens[m.item_id] for m in kept)

    # 5. Conversation reduction (skipped outright when nothing can be due: the common step).
    notice_allowance = 80 if lines["notice_tokens"] < trigger else 0
    threshold = compaction_threshold if compaction_threshold is not None else trigger
    quiet = config.compaction.truncate_args is None and not compaction_due(
        config.compaction,
        len(conversation),
        fixed + material + notice_allowance + previous_summary + scan.tokens,
        threshold,
        force=force_compaction,
    )
    if quiet:
        reduction = Reduction(conversation, state.summary)
    else:
        try:
            reduction = await reduce_conversation(
                conversation,
                state.summary,
                config=config,
                cache=cache,
                limits=ReductionLimits(
                    fixed_tokens=fixed + material + notice_allowance,
                    trigger_tokens=threshold,
                    reserve_tokens=lines["reserve_tokens"],
                    input_limit=limit,
                ),
                summarizer=summarizer,
                force=force_compaction,
                instructions=instructions,
                conversation_tokens=scan.tokens,
            )
        except PreparationError as exc:
            exc.manifest = manifest([], "build_failed", str(exc))
            raise
    build.transforms.extend(reduction.transforms)
    conversation, summary = reduction.conversation, reduction.summary
    unchanged = conversation is scan.conversation
    conversation_tokens = scan.tokens if unchanged else cache.messages(conversation)
    summary_size = previous_summary if summary is state.summary else summary_tokens(summary, cache)
    history = summary_size + conversation_tokens
    over = fixed + material + history - limit
    if over > 0:
        kept, omitted = omit_for_budget(kept, tokens, over)
        build.transforms.extend(omitted)
        material = sum(tokens[m.item_id] for m in kept)

    # 6. Projection: task state, runtime material and the usage notice, then references. Task
    # state is projected from the reduced conversation: what compaction removed is rebuilt here.
    if projection is not None and purpose != "summary":
        projected = list(projection(conversation))
        kept.extend(projected)
        tokens.update(build.material_tokens(projected))
        material += sum(tokens[m.item_id] for m in projected)
    total = fixed + material + history
    if purpose != "summary" and total > lines["notice_tokens"]:
        notice = Material(
            "runtime/context_usage",
            "runtime",
            "notice",
            ContextBlock.runtime(
                "context_usage",
                usage_notice(total, context_size, trigger, config.compression_tool_enabled),
            ),
            tag="RUNTIME_STATE",
        )
        kept.append(notice)
        tokens.update(build.material_tokens([notice]))
    if kept:
        kept.sort(key=lambda m: (m.block.placement != "transient", m.category != "task"))

    # 7. Layout: System → conversation → transient → references; schemas travel apart.
    items = [*system_items, *tool_items]
    if summary is not None:
        summary_hash = cache.text_hash(summary.text)
        items.append(
            ManifestItem(
                f"summary/{summary_hash}",
                "summary",
                "summary",
                summary_size,
                summary_hash,
                None,
                None,
                "user",
            )
        )
    material_items = [_material_item(m, tokens[m.item_id]) for m in kept]
    estimated = sum(i.tokens for i in (*items, *material_items)) + conversation_tokens
    items.extend(scan.items if unchanged else message_items(conversation, cache))
    items.extend(material_items)
    request = ModelRequest(
        system=system_text,
        messages=_layout(summary, conversation, kept),
        tools=tuple(tools),
    )

    # 8. Validation: tool pairs, then budget.
    pairs = scan.pairs if unchanged else ToolPairScanner().feed(conversation)
    problems = pairs.finish(allow_unfinished=purpose == "compaction")
    if problems:
        detail = "; ".join(str(p) for p in problems[:3])
        msg = (
            f"the conversation has broken tool exchanges: {detail}. Every tool_use needs a "
            "tool_result in the next user message, and every tool_result its tool_use."
        )
        raise InvalidToolPairs(msg, manifest=manifest(items, "invalid_tool_pairs", msg, estimated))
    if estimated > limit:
        failed = manifest(items, "budget_exceeded", None, estimated)
        parts = ", ".join(f"{k} {v}" for k, v in failed.totals.items() if v)
        msg = (
            f"the request needs {estimated} tokens ({parts}) but the input limit is {limit}. "
            "Compaction cannot remove System, tool schemas, required material, the summary or "
            "the latest turn: shorten them, raise budget.max_input_tokens, or use a model with a "
            "larger window"
        )
        raise ContextBudgetExceeded(
            msg,
            estimated_tokens=estimated,
            input_limit=limit,
            manifest=manifest(items, "budget_exceeded", msg, estimated),
        )
    # Tuple equality compares identity first: C speed when nothing was replaced.
    changed = summary is not state.summary or conversation != state.conversation
    new_state = (
        WorkingState(conversation=conversation, summary=summary, revision=state.revision + 1)
        if changed
        else state
    )
    return Preparation(
        request, manifest(items, "passed", None, estimated), new_state, reduction.compaction
    )
