"""Stages 7 and 8 of the pipeline: the request laid out in its order, then validated.

`lay_out_sent` runs stage 7 on the reduced conversation: the provider's own edits on what is
sent, its manifest items (the scan's when nothing changed), then `lay_out`.

Layout puts System first, then the summary and the conversation, then transient material and
references (tool schemas apart); validation checks the conversation's start, the tool pairs and
the budget, and builds the manifest for success and failure alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxlab.config._sections import ProviderEdits
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
from ctxlab.materials import Material
from ctxlab.messages import AssistantMessage, TextBlock, ToolPairScanner, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import Summary
from ctxlab.pipeline._compaction import Reduction
from ctxlab.pipeline._provider_edits import apply_provider_edits
from ctxlab.pipeline._scan import ConversationScan, message_items, rescanned
from ctxlab.pipeline._stages import Budgeted, FixedPart
from ctxlab.tokens import TokenCache
from ctxlab.util._records import filled

__all__ = [
    "Layout",
    "ManifestFactory",
    "lay_out",
    "lay_out_sent",
    "material_item",
    "request_head",
    "request_of",
    "validate",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]


# -- 7. Layout -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Stage 7's output: the request and its items, in request order."""

    request: ModelRequest
    items: tuple[ManifestItem, ...]
    estimated_tokens: int


def material_item(material: Material, tokens: int) -> ManifestItem:
    """The manifest item of ``material``, of ``tokens`` tokens as placed."""
    block = material.block
    kind: ItemKind
    if material.category == "source":
        kind = "runtime" if block.placement == "transient" else "reference"
    else:
        kind = material.category
    # The block's hash is a SHA-256 of its text, computed at each read: read once.
    digest = block.content_hash
    return ManifestItem(
        id=material.item_id,
        kind=kind,
        placement=block.placement,
        tokens=tokens,
        content_hash=digest,
        source_id=material.source_id,
        revision=block.revision or digest,
    )


def request_head(
    fixed: FixedPart, summary: Summary | None, summary_tokens: int
) -> tuple[tuple[UserMessage, ...], tuple[ManifestItem, ...]]:
    """What a request holds before its conversation: the summary's message (none without a
    summary), and the items before the conversation's (the unrecorded part, System, tool
    schemas, the summary of ``summary_tokens``). The same at every step until one of them
    changes: the common step keeps them (`LastStep`)."""
    if summary is None:
        return (), (*fixed.unrecorded_items, *fixed.system_items, *fixed.tool_items)
    digest = summary.content_hash
    item = ManifestItem(
        f"summary/{digest}", "summary", "summary", summary_tokens, digest, role="user"
    )
    return (summary.message,), (
        *fixed.unrecorded_items,
        *fixed.system_items,
        *fixed.tool_items,
        item,
    )


def request_of(
    fixed: FixedPart, messages: Sequence[UserMessage | AssistantMessage], material_messages: int
) -> ModelRequest:
    """The request sending ``messages`` (its last ``material_messages`` material) with
    ``fixed``'s System and tool schemas, built at every step (`filled`)."""
    return filled(
        ModelRequest,
        {
            "system": fixed.system_text,
            "messages": messages,
            "tools": fixed.tools,
            "material_messages": material_messages,
        },
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
    """Stage 7: System → (summary) conversation → transient → references; schemas apart; an
    unrecorded part (counted, never sent) leads the items.
    ``conversation_tokens`` is the total of ``conversation_items`` (known from the scan: the
    estimate must not cost a pass over the conversation at every step)."""
    # Built as single tuples: this runs at every step over the whole conversation's items.
    lead, head = request_head(fixed, summary, summary_tokens)
    tail: list[UserMessage] = []
    material_items: tuple[ManifestItem, ...] = ()
    if material.kept:
        for placement in ("transient", "references"):
            blocks = [
                TextBlock(text=m.render()) for m in material.kept if m.block.placement == placement
            ]
            if blocks:
                tail.append(UserMessage(content=tuple(blocks)))
        material_items = tuple(material_item(m, material.tokens[m.item_id]) for m in material.kept)
    items = (*head, *conversation_items, *material_items)
    estimated = fixed.tokens + (summary_tokens if summary is not None else 0)
    estimated += conversation_tokens + material.total
    # Without a summary or material the conversation is sent as it is: a tuple is immutable,
    # so it is shared, not copied (a copy costs time in the conversation's length per step).
    sent = (
        (*lead, *conversation, *tail)
        if lead or tail or type(conversation) is not tuple
        else conversation
    )
    return Layout(request_of(fixed, sent, len(tail)), items, estimated)


def lay_out_sent(
    fixed: FixedPart,
    reduction: Reduction,
    sizes: tuple[int, int],
    material: Budgeted,
    scan: ConversationScan,
    provider_edits: ProviderEdits | None,
    lines: Thresholds,
    cache: TokenCache,
    manifest: ManifestFactory,
) -> tuple[Layout, ToolPairScanner, ConversationScan]:
    """Stage 7 for the reduced conversation (``sizes``: its tokens and its summary's): the
    provider's own edits act on what is sent (the working state keeps what they cleared), then
    the layout. Returns it, the tool pairs of the reduced conversation (for validation), and the
    scan a preparer keeps for its next step: ``scan``, or the reduced conversation's when the
    reduction replaced the scanned one."""
    conversation, summary = reduction.conversation, reduction.summary
    conversation_tokens, summary_size = sizes
    sent, sent_tokens = conversation, conversation_tokens
    unchanged = conversation is scan.conversation
    if provider_edits is not None or scan.compactions:
        estimate = fixed.tokens + summary_size + conversation_tokens + material.total
        sent, edited = apply_provider_edits(
            conversation,
            provider_edits or ProviderEdits(),
            cache,
            estimate,
            lines.input_limit,
            server_compacted=bool(scan.compactions),
        )
        manifest.transforms.extend(edited)
        if edited:
            unchanged, sent_tokens = False, cache.messages(sent)
    kept = scan
    if unchanged:
        items, pairs = scan.items, scan.pairs
    else:
        seen: dict[str, int] = {}
        items = message_items(sent, cache, seen)
        pairs = ToolPairScanner().feed(conversation)
        if sent is conversation:
            # The reduced conversation is already processed (its messages passed stages 2-3):
            # the next step, which appends to it, scans only what it appends, not all of it.
            kept = rescanned(scan, conversation, conversation_tokens, items, seen, pairs)
    layout = lay_out(fixed, summary, summary_size, sent, items, sent_tokens, material, cache)
    return layout, pairs, kept


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
        # Every field, as `ContextManifest(...)` sets it (built at every step: `filled`).
        return filled(
            ContextManifest,
            {
                "request_id": self.request_id,
                "purpose": self.purpose,
                "model": self.model,
                "estimated_input_tokens": estimated,
                "input_limit": self.thresholds.input_limit,
                "counting_method": self.cache.method if items else "unavailable",
                "exact": self.cache.exact and bool(items),
                "items": tuple(items),
                "transforms": tuple(self.transforms),
                "validation": validation,
                "context_size": self.thresholds.context_size,
                "thresholds": self.thresholds,
                "previous_items": self.previous.items if self.previous is not None else None,
                "provider_usage": None,
                "error": error,
                "exact_input_tokens": None,
                "notes": (),
                "provider_items": None,
                "sent_at": None,
            },
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
        # What a recording does not hold was sent all the same: no window below it fits.
        unseen = (
            f"the unrecorded part ({totals['unrecorded']} tokens the recorded agent sent), "
            if totals["unrecorded"]
            else ""
        )
        msg = (
            f"the request needs {layout.estimated_tokens} tokens ({parts}) but the input limit is "
            f"{limit}. Compaction cannot remove {unseen}System, tool schemas, required material, "
            "the summary or the latest turn: shorten them, raise budget.max_input_tokens, or use "
            f"a model with a larger window. {_too_big(layout, manifest.thresholds)}"
        )
        raise ContextBudgetExceeded(
            msg,
            estimated_tokens=layout.estimated_tokens,
            input_limit=limit,
            manifest=manifest(layout.items, "budget_exceeded", msg, layout.estimated_tokens),
        )
    return manifest(layout.items, "passed", None, layout.estimated_tokens)


def _too_big(layout: Layout, lines: Thresholds) -> str:
    """What is largest in a request over its limit, and the window that would hold it (the
    same reservation for the answer): where to look, and what to ask for."""
    if not layout.items:
        return ""
    largest = max(layout.items, key=lambda item: item.tokens)
    what = " ".join(p for p in (largest.placement, largest.role or largest.kind) if p)
    window = layout.estimated_tokens + max(lines.context_size - lines.input_limit, 0)
    return (
        f"Its largest part is the {what} {largest.id} ({largest.tokens} tokens). Only tool "
        f"results are cut (to tool_result_limit: lower it when a result is what is large); a "
        f"user's text, a call's input and System never are. A window of at least {window} "
        f"tokens holds this request"
    )
