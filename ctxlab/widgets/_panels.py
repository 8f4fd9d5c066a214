"""The panels that show a request: Manifest (its items, what was done to them and why) and
Context (what the model saw). The steering panels are in `_controls.py`,
`_config_panel.py` and `_sources_panel.py`.

Everything shown that comes from a tool, a model or a source is text: it is escaped before it
reaches an HTML widget (`html.escape`, DataFrames with ``escape=True``), never interpreted.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ctxlab.manifest import ContextManifest, item_rows
from ctxlab.manifest._explain import explain_transform, message_label
from ctxlab.messages import (
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_names,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.widgets._table import DataTable

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCache

__all__ = ["ContextPanel", "ManifestPanel"]

PREVIEW_CHARS = 3_000
ITEM_COLUMNS = ("placement", "role", "what", "tokens", "done", "why", "id")
DIFF_SHOWN = 20
"""Items named per list of a diff; the rest are counted."""
EMPTY = "<i>No request yet: send a message (or open a recording) and its request shows here.</i>"


def _table(rows: list[list[Any]], columns: list[str], css: str) -> str:
    """An HTML table of escaped cells (pandas' ``to_html`` costs ~5 ms a render; this ~0.3)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape('' if v is None else str(v))}</td>" for v in row)
        + "</tr>"
        for row in rows
    )
    return f"<table class='dataframe {css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class ManifestPanel:
    """Items, transforms, validation and the diff to the previous request of one step."""

    def __init__(self) -> None:
        self.header = w.HTML()
        self.table = DataTable(columns=list(ITEM_COLUMNS), key="id", css_class="ctxlab-items")
        """The items: click a header to sort, type to filter, click a row to open its block."""
        self.transforms = w.HTML()
        self.diff = w.HTML()
        self.widget = w.VBox(
            [
                self.header,
                w.HTML("<b>Items</b> · click a header to sort, a row to open its block"),
                self.table,
                w.HTML("<b>Transforms</b>"),
                self.transforms,
                w.HTML("<b>Diff to the previous request</b>"),
                self.diff,
            ],
            # No scroll area of its own: the items table scrolls in its (sticky header) box, and
            # a scroll area around another garbled the header and hid the right-hand columns.
        )
        self.highlight = ""
        self.header.value = EMPTY
        self.transforms.value = self.diff.value = "<i>–</i>"

    def show(
        self,
        step: int,
        manifest: ContextManifest,
        request: ModelRequest | None = None,
        *,
        calibrated: int | None = None,
        previous: ModelRequest | None = None,
    ) -> None:
        """Show request ``step``: each item described (with ``request``, the messages it stands
        for: role, tool, preview), what was done to it and why; the estimate beside the bill
        (``calibrated``: the calibrated estimate); the diff, named from ``previous`` (the
        previous request) where it helps."""
        error = (
            f"<br><span style='color:#c00'>{html.escape(manifest.error)}</span>"
            if manifest.error
            else ""
        )
        usage = manifest.provider_usage
        bill = ""
        if usage is not None:
            billed = usage.total_input_tokens
            bill = f" · billed <b>{billed:,}</b> (input + cache read + cache write)"
            if calibrated is not None and billed:
                bill += (
                    f" · calibrated estimate {calibrated:,} ({(calibrated - billed) / billed:+.1%})"
                )
        notes = "".join(
            f"<br><span class='ctxlab-note' style='color:#555'>{html.escape(n)}</span>"
            for n in manifest.notes
        )
        marks = "".join(
            f"<br><span class='ctxlab-recorded-compaction' style='color:#b35900'>◆ recorded "
            f"compaction: {html.escape(explain_transform(t, manifest))}</span>"
            for t in manifest.transforms
            if t.kind == "recorded_compaction"
        )
        self.header.value = (
            f"<b>Request {step}</b> · {html.escape(manifest.purpose)} · id "
            f"<code>{html.escape(manifest.request_id)}</code> · validation "
            f"<b>{html.escape(manifest.validation)}</b> · estimate "
            f"{manifest.estimated_input_tokens:,} / {manifest.input_limit:,} tokens "
            f"({html.escape(manifest.counting_method)}{', exact' if manifest.exact else ''})"
            f"{bill}{error}{marks}{notes}"
        )
        described = item_rows(manifest, request)
        rows = [
            [r.placement, r.role or r.kind, r.label, r.tokens, ", ".join(r.badges), r.why, r.id]
            for r in described
        ]
        with self.table.hold_sync():
            self.table.rows = rows
            present = any(row[-1] == self.highlight for row in rows)
            self.table.selected = self.highlight if present else ""
        t_columns = ["kind", "target", "detail", "tokens_before", "tokens_after"]
        t_rows = [[str(t), *(getattr(t, c) for c in t_columns)] for t in manifest.transforms]
        self.transforms.value = (
            _table(t_rows, ["code", *t_columns], "ctxlab-transforms") if t_rows else "<i>none</i>"
        )
        self.diff.value = _diff_html(manifest, described, previous)


def _diff_html(
    manifest: ContextManifest, described: list[Any], previous: ModelRequest | None
) -> str:
    diff = manifest.diff
    if diff is None:
        return "<i>first request</i>"
    labels = {r.id: r.label for r in described}
    if previous is not None and diff.removed and manifest.previous_items is not None:
        # The dropped items are named from the previous request's messages.
        by_hash = {m.content_hash: m for m in previous.messages}
        names = tool_names(previous.messages)
        for item in manifest.previous_items:
            message = by_hash.get(item.content_hash)
            if message is not None:
                labels.setdefault(item.id, message_label(message, names))

    def named(item_id: str) -> str:
        label = labels.get(item_id)
        return html.escape(f"{label} ({item_id})" if label else item_id)

    parts = []
    for label, ids in (("appeared", diff.added), ("dropped", diff.removed)):
        if ids:
            shown = [f"<li>{named(i)}</li>" for i in ids[:DIFF_SHOWN]]
            more = f"<li>… and {len(ids) - DIFF_SHOWN:,} more</li>" if len(ids) > DIFF_SHOWN else ""
            parts.append(f"<b>{label}</b> ({len(ids):,})<ul>{''.join(shown)}{more}</ul>")
    for label, changes in (("shrank", diff.shrank), ("grew", diff.grew)):
        if changes:
            shown = [
                f"<li>{named(i)}: {a:,} → {b:,} tokens</li>" for i, a, b in changes[:DIFF_SHOWN]
            ]
            more = (
                f"<li>… and {len(changes) - DIFF_SHOWN:,} more</li>"
                if len(changes) > DIFF_SHOWN
                else ""
            )
            parts.append(f"<b>{label}</b> ({len(changes):,})<ul>{''.join(shown)}{more}</ul>")
    return "".join(parts) or "<i>no change</i>"


class ContextPanel:
    """What the model saw at one step: System, messages, material; tool output escaped."""

    def __init__(self) -> None:
        self.widget = w.HTML(EMPTY, layout=w.Layout(max_height="520px", overflow="auto"))
        self.focus = ""
        """The id of the item whose block opens at the top (a click on the map or a row)."""

    def show(
        self,
        step: int,
        request: ModelRequest | None,
        cache: TokenCache,
        manifest: ContextManifest | None = None,
    ) -> None:
        """Show request ``step``; with its ``manifest``, System and tool schemas carry the
        manifest's token counts (one count per item, the same in every panel)."""
        if request is None:
            self.widget.value = (
                f"<i>request {step}: no request to show — its preparation failed, or it was made "
                "before this Lab was opened (the session log keeps manifests, not requests)</i>"
            )
            return
        counted = {i.id: i.tokens for i in manifest.items} if manifest is not None else {}
        system = sum(t for i, t in counted.items() if i.startswith("system/"))
        system = system or cache.text(request.system)  # one count, here and in the focus
        parts = [f"<div class='ctxlab-context'><b>Request {step}</b>"]
        parts.append(_details("system", request.system, system, open_=False))
        for tool in request.tools:
            tokens = counted.get(f"tool/{tool.name}") or cache.text(tool.rendered)
            parts.append(_details(f"tool schema {tool.name}", tool.rendered, tokens))
        names = tool_names(request.messages)
        for message in request.messages:
            for block in message.content:
                parts.append(_block(message.role, block, cache, names))
        parts.append("</div>")
        focused = self._focused(request, manifest, cache, names, system)
        if focused:
            parts.insert(1, focused)
        self.widget.value = "".join(parts)

    def _focused(
        self,
        request: ModelRequest,
        manifest: ContextManifest | None,
        cache: TokenCache,
        names: dict[str, str],
        system_tokens: int,
    ) -> str:
        """The selected item's block(s), open, framed at the top; "" if it is not here."""
        item = next((i for i in manifest.items if i.id == self.focus), None) if manifest else None
        if item is None:
            return ""
        if item.id.startswith("system/"):
            blocks = _details("system", request.system, system_tokens, open_=True)
        elif item.id.startswith("tool/"):
            tool = next((t for t in request.tools if f"tool/{t.name}" == item.id), None)
            if tool is None:
                return ""
            blocks = _details(f"tool schema {tool.name}", tool.rendered, item.tokens, open_=True)
        elif item.placement in ("transient", "references"):
            # Material travels as one text block each in the request's last user messages,
            # opening with its tag and id (`Material.render`).
            tail = request.messages[len(request.messages) - request.material_messages :]
            marker = f' id="{item.id}">'
            found = [
                b
                for m in tail
                for b in m.content
                if isinstance(b, TextBlock) and marker in b.text.split("\n", 1)[0]
            ]
            if not found:
                return ""
            blocks = "".join(_block("user", b, cache, names, open_=True) for b in found)
        else:
            message = next(
                (m for m in request.messages if m.content_hash == item.content_hash), None
            )
            if message is None:
                return ""
            blocks = "".join(
                _block(message.role, b, cache, names, open_=True) for b in message.content
            )
        return (
            "<div class='ctxlab-focus' style='border:2px solid #e0b100;padding:4px;margin:4px 0'>"
            f"<b>Selected item</b> {html.escape(item.id)} · {html.escape(item.placement)} · "
            f"{item.tokens} tokens{blocks}</div>"
        )


def _pretty(text: str) -> str:
    """JSON laid out for reading; anything else as it is."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return text


def _details(title: str, text: str, tokens: int, *, open_: bool = False) -> str:
    shown = (
        text
        if len(text) <= PREVIEW_CHARS
        else (text[:PREVIEW_CHARS] + f"\n… {len(text) - PREVIEW_CHARS} more characters")
    )
    return (
        f"<details{' open' if open_ else ''}><summary>{html.escape(title)} · {tokens} tokens"
        f"</summary><pre class='ctxlab-text' style='white-space:pre-wrap'>{html.escape(shown)}"
        "</pre></details>"
    )


def _block(
    role: str,
    block: Any,
    cache: TokenCache,
    names: dict[str, str] | None = None,
    *,
    open_: bool = False,
) -> str:
    """One block as a collapsible section; ``open_`` opens even those shown closed by default."""
    tokens = cache.block(block)
    if isinstance(block, ToolResultBlock):
        name = (names or {}).get(block.tool_use_id, "a tool")
        title = f"{role} · tool result of {name} ({block.tool_use_id})" + (
            " (error)" if block.is_error else ""
        )
        return _details(title, _pretty(block.text), tokens, open_=open_)
    if isinstance(block, ToolUseBlock):
        shown = json.dumps(block.input, indent=2, ensure_ascii=False)
        return _details(f"{role} · tool call {block.name} ({block.id})", shown, tokens, open_=True)
    if isinstance(block, TextBlock):
        return _details(f"{role} · text", block.text, tokens, open_=True)
    if isinstance(block, HintBlock):
        return _details(f"{role} · hint", block.hint, tokens, open_=True)
    if isinstance(block, ImageBlock):
        return f"<div>{html.escape(role)} · image · {tokens} tokens</div>"
    if isinstance(block, ThinkingBlock):
        return _details(f"{role} · thinking", block.thinking, tokens, open_=open_)
    if isinstance(block, DocumentBlock):
        title = f"{role} · document" + (f" {block.title}" if block.title else "")
        return _details(
            title, block.text or f"({block.source.get('type')} source)", tokens, open_=open_
        )
    if isinstance(block, ProviderBlock):
        return _details(f"{role} · {block.kind}", block.data_json, tokens, open_=open_)
    if isinstance(block, RedactedThinkingBlock):
        return f"<div>{html.escape(role)} · redacted thinking · {tokens} tokens</div>"
    return f"<div>{html.escape(role)} · {html.escape(type(block).__name__)}</div>"
