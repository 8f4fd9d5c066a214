"""A request's items in words: what each is (role, tool, a preview), what was done to it, and
why — computed here so that every view (the Lab, static HTML) says the same."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.manifest._kinds import OWN_COMPACTIONS, asked_by, transform_info
from ctxlab.manifest._manifest import ContextManifest, Transform
from ctxlab.messages import TextBlock, ToolResultBlock, ToolUseBlock, tool_names

if TYPE_CHECKING:
    from ctxlab.messages import AssistantMessage, UserMessage
    from ctxlab.messages._request import ModelRequest

__all__ = ["ItemRow", "explain_transform", "item_rows", "message_label"]

_PREVIEW = 80
_BADGES = {
    "tool_result_truncation": "truncated",
    "tool_result_offload": "offloaded",
    "image_offload": "offloaded",
    "image_drop": "dropped",
    "omitted_for_budget": "omitted",
    "args_truncation": "args cut",
    "tool_output_prune": "pruned",
    "observation_mask": "masked",
    "provider_clear_tool_uses": "cleared",
    "provider_clear_thinking": "cleared",
    "provider_trim_tool_output": "trimmed",
    "provider_truncation": "dropped",
    "provider_compaction": "compacted",
    "history_compaction": "summarized",
    "history_truncation": "dropped",
    "recorded_compaction": "recorded compaction",
}


@dataclass(frozen=True)
class ItemRow:
    """One item of a request, described."""

    id: str
    kind: str
    placement: str
    role: str
    label: str
    """What it is: ``user: Fix the crash…``, ``tool result of bash``, ``summary``, ..."""
    tokens: int
    badges: tuple[str, ...]
    """What was done to it: truncated, offloaded, masked, ..."""
    why: str
    """The reason in words."""


def _tokens(value: int | None) -> str:
    return f"{value:,}" if value is not None else "?"


def explain_transform(transform: Transform, manifest: ContextManifest) -> str:
    """The reason for one transform, in words: its kind's template (`TransformInfo.why`) filled
    from the transform and the manifest's lines."""
    info = transform_info(transform.kind)
    if not info.why:
        detail = f": {transform.detail}" if transform.detail else ""
        return f"{transform.kind.replace('_', ' ')} ({info.effect}){detail}"
    lines = manifest.thresholds
    trigger = ""
    asked = asked_by(transform)
    if asked is not None:  # on demand: a rule asked, whatever the request's size
        trigger = f": the on-demand rule {asked!r} asked for it"
    elif lines is not None and lines.context_size:
        share = 100 * lines.trigger_tokens / lines.context_size
        trigger = (
            f": the request reached the trigger ({lines.trigger_tokens:,} tokens, "
            f"{share:.0f} % of the window)"
        )
    after = transform.tokens_after
    return info.why.format(
        target=transform.target,
        detail=transform.detail or _DETAIL_DEFAULTS.get(transform.kind, ""),
        before=_tokens(transform.tokens_before),
        after=_tokens(after),
        trigger=trigger,
        # A recorded compaction: before the request it is marked on, or after the last.
        when="after this request, the session's last"
        if transform.target == "after"
        else "just before",
        billed=f"; this request was billed {after:,} tokens" if after is not None else "",
    )


_DETAIL_DEFAULTS = {
    "tool_result_offload": "the workspace",
    "recorded_compaction": "trigger unknown",
}
"""What a template says where the transform has no detail."""


def _preview(text: str) -> str:
    # The whitespace of a prefix collapsed is a prefix of the whole text collapsed: a preview
    # reads a few hundred characters, not a tool's whole output (a 5,000-request recording's
    # table describes 10,000 of them when it opens).
    # A head that flattens short (a text led by blank lines or indentation) is read again four
    # times longer, not the whole text at once: a few heads, whatever the text's length.
    size = 4 * _PREVIEW
    while True:
        head = text[:size]
        flat = " ".join(head.split())
        if len(flat) > _PREVIEW or len(head) == len(text):
            break
        size *= 4
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


def message_label(message: UserMessage | AssistantMessage, names: dict[str, str]) -> str:
    """What a message is, in a line: ``user: Fix the crash…``, ``tool result of bash: …``
    (``names``: tool names by call id, `tool_names`)."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            parts.append(f"tool call {block.name}: {_preview(block.input_json)}")
        elif isinstance(block, ToolResultBlock):
            error = " (error)" if block.is_error else ""
            parts.append(
                f"tool result of {names.get(block.tool_use_id, 'a tool')}{error}: {_preview(block.text)}"
            )
        elif isinstance(block, TextBlock) and block.text.strip():
            parts.append(f"{message.role}: {_preview(block.text)}")
    return " · ".join(parts[:3]) + (f" · +{len(parts) - 3} more" if len(parts) > 3 else "")


def item_rows(manifest: ContextManifest, request: ModelRequest | None = None) -> list[ItemRow]:
    """Every item of ``manifest`` described (with ``request``, the messages it stands for)."""
    messages: Sequence[UserMessage | AssistantMessage] = request.messages if request else ()
    by_hash = {m.content_hash: m for m in messages}
    names = tool_names(messages)
    holder = {
        b.tool_use_id: f"message/{m.content_hash}"
        for m in messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    summary = next((i.id for i in manifest.items if i.kind == "summary"), "")
    done: dict[str, list[Transform]] = {}
    for transform in manifest.transforms:
        target = holder.get(transform.target, transform.target)
        if transform.kind in OWN_COMPACTIONS and summary:
            target = summary  # the summary stands for what was compacted
        done.setdefault(target, []).append(transform)
    rows: list[ItemRow] = []
    for item in manifest.items:
        message = by_hash.get(item.content_hash) if item.kind == "message" else None
        if message is not None:
            label = message_label(message, names)
        elif item.kind == "unrecorded":
            # It has no text: what it stands for and how its size is known.
            label = f"{item.source_id or 'not recorded'} ({item.revision or 'size stated'})"
        else:
            label = _item_label(item.id, item.kind)
        acted = done.get(item.id, [])
        badges = tuple(dict.fromkeys(_BADGES[t.kind] for t in acted if t.kind in _BADGES))
        why = "; ".join(explain_transform(t, manifest) for t in acted)
        rows.append(
            ItemRow(
                item.id, item.kind, item.placement, item.role or "", label, item.tokens, badges, why
            )
        )
    return rows


def _item_label(item_id: str, kind: str) -> str:
    head, _, rest = item_id.partition("/")
    if kind == "summary":
        return "summary of the earlier conversation"
    return f"{head} {rest}".strip() if rest else item_id
