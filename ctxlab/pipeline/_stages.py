"""Stages 1, 4 and 6 of the pipeline, each a function with a typed input and output.

Stages 2–3 (images, tool results) live in ``_scan.py``, stage 5 (conversation reduction) in
``_compaction.py``, stages 7–8 (layout, validation) in ``_layout.py``; `prepare` in
``_prepare.py`` runs them in order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxlab.manifest import (
    ManifestItem,
    Purpose,
    Thresholds,
    Transform,
)
from ctxlab.materials import ContextBlock, Material, Materials, SystemPart, Unrecorded
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.messages._request import ToolSchema
from ctxlab.pipeline._budget import SelectionPolicy, omit_for_budget
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache
from ctxlab.util._checks import whole_number

__all__ = [
    "Budgeted",
    "FixedPart",
    "budget_materials",
    "fixed_part",
    "notice_due",
    "project",
    "source_failures",
    "unrecorded_item",
    "usage_material",
    "usage_notice",
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
    """Stage 1's output: System and tool schemas, itemized and counted — and what a recording
    does not hold of them (`Unrecorded`), by its size."""

    system: tuple[SystemPart, ...]
    tools: tuple[ToolSchema, ...]
    system_items: tuple[ManifestItem, ...]
    tool_items: tuple[ManifestItem, ...]
    tokens: int
    """System, tool-schema and unrecorded tokens together."""
    system_text: str
    """The one System message."""
    unrecorded: Unrecorded | None = None
    unrecorded_items: tuple[ManifestItem, ...] = ()
    """The unrecorded part's item (none without one): it leads the request's items."""


def unrecorded_item(part: Unrecorded) -> ManifestItem:
    """The manifest item of an unrecorded part: its size, what it stands for (``source_id``)
    and how its size is known (``revision``)."""
    return ManifestItem(
        part.item_id,
        "unrecorded",
        "unrecorded",
        part.tokens,
        text_hash(f"unrecorded\x00{part.key}\x00{part.parts}"),
        source_id=f"not recorded: {part.parts}",
        revision=part.how,
    )


def fixed_part(
    system: tuple[SystemPart, ...],
    tools: tuple[ToolSchema, ...],
    cache: TokenCache,
    previous: FixedPart | None = None,
    unrecorded: Unrecorded | None = None,
) -> FixedPart:
    """Itemize System and tool schemas (and the unrecorded part, when there is one);
    ``previous`` is returned as is when none changed."""
    # Compared by identity first, then by value: the common step costs three comparisons.
    if (
        previous is not None
        and previous.system == system
        and previous.tools == tools
        and previous.unrecorded == unrecorded
    ):
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
    unrecorded_items = (unrecorded_item(unrecorded),) if unrecorded is not None else ()
    return FixedPart(
        system=system,
        tools=tools,
        system_items=system_items,
        tool_items=tool_items,
        tokens=sum(i.tokens for i in (*unrecorded_items, *system_items, *tool_items)),
        system_text="\n\n".join(p.text for p in system),
        unrecorded=unrecorded,
        unrecorded_items=unrecorded_items,
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
    # Any size a sum of counts reaches (many bills of up to MAX_TOKENS), not a number whose
    # digits no message can print, nor a window of 0 to divide by.
    whole_number(total, "total", high=sys.maxsize)
    whole_number(context_size, "context_size", low=1, high=sys.maxsize)
    whole_number(trigger, "trigger", high=sys.maxsize)
    return _notice_text(total, context_size, trigger, tool_enabled)


def _notice_text(total: int, context_size: int, trigger: int, tool_enabled: bool) -> str:
    # `usage_notice` without its checks: the pipeline's figures are sums of counts and lines
    # a checked config gave (9 calls a step less where the notice shows, most steps of a
    # long session).
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


def notice_due(total: int, thresholds: Thresholds, purpose: Purpose, with_notice: bool) -> bool:
    """Whether stage 6 adds the usage notice to a request of ``total`` tokens without it (the
    full path's `project` and the common step ask this one question)."""
    return with_notice and purpose != "summary" and total > thresholds.notice_tokens


def usage_material(total: int, thresholds: Thresholds, tool_enabled: bool) -> Material:
    """The usage notice of a request of ``total`` tokens under ``thresholds``, as material."""
    text = _notice_text(total, thresholds.context_size, thresholds.trigger_tokens, tool_enabled)
    return Material(
        "runtime/context_usage",
        "runtime",
        "notice",
        ContextBlock.runtime("context_usage", text),
        tag="RUNTIME_STATE",
    )


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
    if notice_due(total, thresholds, purpose, with_notice):
        notice = usage_material(total, thresholds, tool_enabled)
        if not budgeted.kept and budgeted.policy is None:
            # No material but the notice: what `adding`, `omit` (nothing optional to omit, no
            # policy to ask) and the ordering below give for it alone.
            tokens = {**budgeted.tokens, **material_tokens((notice,), cache)}
            return Budgeted((notice,), tokens, budgeted.transforms, None)
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
