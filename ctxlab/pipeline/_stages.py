"""Stages 1, 4, 6, 7 and 8 of the pipeline, each a function with a typed input and output.

Stages 2–3 (images, tool results) live in ``_scan.py`` and stage 5 (conversation reduction) in
``_compaction.py``; `prepare` in ``_prepare.py`` runs them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxlab.exceptions import ContextBudgetExceeded, InvalidConversationStart, InvalidToolPairs
from ctxlab.manifest import (
    ContextManifest,
    ItemKind,
    ManifestItem,
    Purpose,
    Thresholds,
    Transform,
    Validation,
)
from ctxlab.materials import ContextBlock, Material, Materials, SystemPart
from ctxlab.messages import AssistantMessage, TextBlock, ToolPairScanner, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import Summary
from ctxlab.pipeline._budget import SelectionPolicy, omit_for_budget
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache

__all__ = [
    "Budgeted",
    "FixedPart",
    "Layout",
    "ManifestFactory",
    "budget_materials",
    "fixed_part",
    "lay_out",
    "project",
    "source_failures",
    "usage_notice",
    "validate",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]
Projection = Callable[[Sequence[UserMessage | AssistantMessage]], Sequence[Material]]


def text_hash(text: str) -> str:
    """The content hash a `TextBlock` holding ``text`` has (System parts and tool schemas are
    itemized once per change, so this is not cached)."""
    return TextBlock(text=text).content_hash


# -- 1. Materials --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FixedPart:
    """Stage 1's output: System and tool schemas, itemized and counted."""

    system: tuple[SystemPart, ...]
    tools: tuple[ToolSchema, ...]
    system_items: tuple[ManifestItem, ...]
    tool_items: tuple[ManifestItem, ...]
    tokens: int
    """System and tool-schema tokens together."""
    system_text: str
    """The one System message."""


def fixed_part(
    system: tuple[SystemPart, ...],
    tools: tuple[ToolSchema, ...],
    cache: TokenCache,
    previous: FixedPart | None = None,
) -> FixedPart:
    """Itemize System and tool schemas; ``previous`` is returned as is when neither changed."""
    # Compared by identity first, then by value: the common step costs two comparisons.
    if previous is not None and previous.system == system and previous.tools == tools:
        return previous
    system_items = tuple(
        ManifestItem(
            f"system/{p.name}",
            "system",
            "system",
            cache.text(p.text) + MESSAGE_OVERHEAD,
            text_hash(p.text),
        )
        for p in system
    )
    tool_items = tuple(
        ManifestItem(
            f"tool/{t.name}",
            "tool_schema",
            "tools",
            cache.text(t.rendered),
            text_hash(t.rendered),
        )
        for t in tools
    )
    return FixedPart(
        system=system,
        tools=tools,
        system_items=system_items,
        tool_items=tool_items,
        tokens=sum(i.tokens for i in (*system_items, *tool_items)),
        system_text="\n\n".join(p.text for p in system),
    )


def source_failures(materials: Materials) -> list[Transform]:
    """Sources that failed under the omit policy, as ``source_unavailable`` transforms."""
    return [
        Transform("source_unavailable", source, reason) for source, reason in materials.failures
    ]


# -- 4. Budget -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Budgeted:
    """Material that survived the budget, with its token counts."""

    kept: tuple[Material, ...]
    tokens: dict[str, int]
    """Tokens by item id, of kept and omitted material alike."""
    transforms: tuple[Transform, ...] = ()
    """The omissions made."""
    policy: SelectionPolicy | None = None
    """The caller's omission order (000's contextSelectionPolicy), when it has one."""

    @property
    def total(self) -> int:
        """Tokens of the kept material."""
        return sum(self.tokens[m.item_id] for m in self.kept) if self.kept else 0

    def omit(self, excess: int) -> Budgeted:
        """Drop optional material until ``excess`` tokens are freed (memory → knowledge →
        sources, lowest priority first)."""
        if excess <= 0:
            return self
        kept, omitted = omit_for_budget(self.kept, self.tokens, excess, self.policy)
        return Budgeted(tuple(kept), self.tokens, (*self.transforms, *omitted), self.policy)

    def adding(self, materials: Sequence[Material], cache: TokenCache) -> Budgeted:
        """These materials added (projections: never omitted)."""
        tokens = {**self.tokens, **material_tokens(materials, cache)}
        return Budgeted((*self.kept, *materials), tokens, self.transforms, self.policy)


NO_MATERIAL = Budgeted((), {})
"""No material at all (shared: a `Budgeted` is never changed in place)."""


def material_tokens(materials: Sequence[Material], cache: TokenCache) -> dict[str, int]:
    """Tokens of each material block as placed in the request."""
    return {m.item_id: cache.text(m.render()) + MESSAGE_OVERHEAD for m in materials}


def budget_materials(
    blocks: Sequence[Material],
    cache: TokenCache,
    *,
    excess_without_them: int,
    policy: SelectionPolicy | None = None,
) -> Budgeted:
    """Stage 4: count the optional material and omit what would push the request
    ``excess_without_them`` tokens over its limit (that figure excludes the material)."""
    if not blocks:
        return NO_MATERIAL  # the common step of a session without material
    budgeted = Budgeted(tuple(blocks), material_tokens(blocks, cache), policy=policy)
    return budgeted.omit(excess_without_them + budgeted.total)


# -- 6. Projection -------------------------------------------------------------------------------


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


def project(
    budgeted: Budgeted,
    conversation: Conversation,
    *,
    cache: TokenCache,
    projection: Projection | None,
    base_tokens: int,
    thresholds: Thresholds,
    purpose: Purpose,
    tool_enabled: bool,
    with_notice: bool = True,
) -> Budgeted:
    """Stage 6: task state (from the reduced conversation) and the usage notice join the material,
    transient material first. ``base_tokens`` is System + tools + summary + conversation;
    ``with_notice=False`` holds the usage notice back (002: not while a task is in progress)."""
    if purpose == "summary":
        return budgeted
    if projection is not None:
        projected = projection(conversation)
        if projected:
            budgeted = budgeted.adding(list(projected), cache)
    total = base_tokens + budgeted.total
    if with_notice and total > thresholds.notice_tokens:
        text = usage_notice(total, thresholds.context_size, thresholds.trigger_tokens, tool_enabled)
        notice = Material(
            "runtime/context_usage",
            "runtime",
            "notice",
            ContextBlock.runtime("context_usage", text),
            tag="RUNTIME_STATE",
        )
        budgeted = budgeted.adding([notice], cache)
    # Task state and the notice are added after stage 4's omission: when they push the request
    # over its limit, optional material makes room for them (they are never omitted).
    over = base_tokens + budgeted.total - thresholds.input_limit
    if over > 0:
        budgeted = budgeted.omit(over)
    if not budgeted.kept:
        return budgeted  # the common step of a session without material: nothing to order
    kept = sorted(
        budgeted.kept, key=lambda m: (m.block.placement != "transient", m.category != "task")
    )
    return Budgeted(tuple(kept), budgeted.tokens, budgeted.transforms, budgeted.policy)


# -- 7. Layout -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Stage 7's output: the request and its items, in request order."""

    request: ModelRequest
    items: tuple[ManifestItem, ...]
    estimated_tokens: int


def _material_item(material: Material, tokens: int) -> ManifestItem:
    block = material.block
    kind: ItemKind
    if material.category == "source":
        kind = "runtime" if block.placement == "transient" else "reference"
    else:
        kind = material.category
    return ManifestItem(
        id=material.item_id,
        kind=kind,
        placement=block.placement,
        tokens=tokens,
        content_hash=block.content_hash,
        source_id=material.source_id,
        revision=block.revision or block.content_hash,
    )


def lay_out(
    fixed: FixedPart,
    summary: Summary | None,
    summary_tokens: int,
    conversation: Conversation,
    conversation_items: Sequence[ManifestItem],
    conversation_tokens: int,
    material: Budgeted,
    cache: TokenCache,
) -> Layout:
    """Stage 7: System → (summary) conversation → transient → references; schemas apart.
    ``conversation_tokens`` is the total of ``conversation_items`` (known from the scan: the
    estimate must not cost a pass over the conversation at every step)."""
    # Built as single tuples: this runs at every step over the whole conversation's items.
    lead: tuple[UserMessage, ...] = ()
    summary_items: tuple[ManifestItem, ...] = ()
    if summary is not None:
        digest = summary.content_hash
        summary_items = (
            ManifestItem(
                f"summary/{digest}", "summary", "summary", summary_tokens, digest, role="user"
            ),
        )
        lead = (UserMessage(content=(TextBlock(text=summary.text),)),)
    tail: list[UserMessage] = []
    material_items: tuple[ManifestItem, ...] = ()
    if material.kept:
        for placement in ("transient", "references"):
            blocks = [
                TextBlock(text=m.render()) for m in material.kept if m.block.placement == placement
            ]
            if blocks:
                tail.append(UserMessage(content=tuple(blocks)))
        material_items = tuple(_material_item(m, material.tokens[m.item_id]) for m in material.kept)
    items = (
        *fixed.system_items,
        *fixed.tool_items,
        *summary_items,
        *conversation_items,
        *material_items,
    )
    estimated = fixed.tokens + (summary_tokens if summary is not None else 0)
    estimated += conversation_tokens + material.total
    request = ModelRequest(
        system=fixed.system_text,
        messages=(*lead, *conversation, *tail),
        tools=fixed.tools,
        material_messages=len(tail),
    )
    return Layout(request, items, estimated)


# -- 8. Validation -------------------------------------------------------------------------------


@dataclass
class ManifestFactory:
    """Builds this preparation's manifest, for success and failure alike."""

    request_id: str
    purpose: Purpose
    model: str
    cache: TokenCache
    thresholds: Thresholds
    previous: ContextManifest | None
    transforms: list[Transform] = field(default_factory=list)

    def __call__(
        self,
        items: Sequence[ManifestItem],
        validation: Validation,
        error: str | None = None,
        estimated: int = -1,
    ) -> ContextManifest:
        # An early failure has no statistics: -1 tokens and an "unavailable" method.
        return ContextManifest(
            request_id=self.request_id,
            purpose=self.purpose,
            model=self.model,
            estimated_input_tokens=estimated,
            input_limit=self.thresholds.input_limit,
            counting_method=self.cache.method if items else "unavailable",
            exact=self.cache.exact and bool(items),
            items=tuple(items),
            transforms=tuple(self.transforms),
            validation=validation,
            context_size=self.thresholds.context_size,
            thresholds=self.thresholds,
            error=error,
            previous_items=self.previous.items if self.previous is not None else None,
        )


def validate(
    layout: Layout, pairs: ToolPairScanner, purpose: Purpose, manifest: ManifestFactory
) -> ContextManifest:
    """Stage 8: the conversation's start, tool pairs, then budget. Returns the passed manifest
    or raises `InvalidConversationStart` / `InvalidToolPairs` / `ContextBudgetExceeded`
    carrying the failed one."""
    messages = layout.request.messages
    # A compaction request is never sent: only what goes to a provider must start with a user.
    if purpose != "compaction" and (not messages or messages[0].role != "user"):
        msg = (
            "the request holds no messages: a provider needs at least one user message; send a "
            "prompt first"
            if not messages
            else "the request starts with an assistant turn, which providers reject: the "
            "conversation must begin with a user message (replays start at the first one)"
        )
        failed = manifest(layout.items, "invalid_conversation", msg, layout.estimated_tokens)
        raise InvalidConversationStart(msg, manifest=failed)
    problems = pairs.finish(allow_unfinished=purpose == "compaction")
    if problems:
        detail = "; ".join(str(p) for p in problems[:3])
        msg = (
            f"the conversation has broken tool exchanges: {detail}. Every tool_use needs a "
            "tool_result in the next user message, and every tool_result its tool_use."
        )
        failed = manifest(layout.items, "invalid_tool_pairs", msg, layout.estimated_tokens)
        raise InvalidToolPairs(msg, manifest=failed)
    limit = manifest.thresholds.input_limit
    if layout.estimated_tokens > limit:
        totals = manifest(layout.items, "budget_exceeded").totals
        parts = ", ".join(f"{k} {v}" for k, v in totals.items() if v)
        msg = (
            f"the request needs {layout.estimated_tokens} tokens ({parts}) but the input limit is "
            f"{limit}. Compaction cannot remove System, tool schemas, required material, the "
            "summary or the latest turn: shorten them, raise budget.max_input_tokens, or use a "
            "model with a larger window"
        )
        raise ContextBudgetExceeded(
            msg,
            estimated_tokens=layout.estimated_tokens,
            input_limit=limit,
            manifest=manifest(layout.items, "budget_exceeded", msg, layout.estimated_tokens),
        )
    return manifest(layout.items, "passed", None, layout.estimated_tokens)
