"""A manifest as static HTML: tokens by placement against the limit, the bill, what the request held
that its items cannot show, its items, its transforms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.util._html import PLACEMENT_COLORS, bar_html, escape, table_html

if TYPE_CHECKING:
    from ctxlab.manifest._manifest import ContextManifest

__all__ = ["manifest_html"]


def manifest_html(manifest: ContextManifest) -> str:
    """A request at a glance: tokens by placement against the limit, the provider's bill when
    known, its notes, items, transforms."""
    totals = manifest.totals
    limit = manifest.input_limit if manifest.input_limit > 0 else manifest.estimated_input_tokens
    head = (
        f"<b>request {escape(manifest.request_id)}</b> · {escape(manifest.purpose)} · "
        f"{manifest.estimated_input_tokens:,} of {manifest.input_limit:,} input tokens · "
        f"{escape(manifest.validation)}"
    )
    usage = manifest.provider_usage
    if usage is not None:
        # The bill beside the estimate, in the live Manifest panel's words.
        head += (
            f" · billed <b>{usage.total_input_tokens:,}</b> (input {usage.input_tokens:,} + "
            f"cache read {usage.cache_read_input_tokens:,} + cache write "
            f"{usage.cache_creation_input_tokens:,}), output {usage.output_tokens:,}"
        )
    head += "".join(
        f"<br><span class='ctxlab-note' style='color:#555'>{escape(n)}</span>"
        for n in manifest.notes
    )
    items = table_html(
        [[i.placement, i.kind, i.role or "", i.id, i.tokens] for i in manifest.items],
        ["placement", "kind", "role", "item", "tokens"],
    )
    transforms = (
        table_html(
            [[t.kind, t.target, t.detail] for t in manifest.transforms],
            ["transform", "target", "detail"],
        )
        if manifest.transforms
        else "<i>no transforms</i>"
    )
    legend = " ".join(
        f"<span style='color:{PLACEMENT_COLORS[p]}'>■</span> {escape(p)} {t:,}"
        for p, t in totals.items()
        if t
    )
    return f"<div>{head}{bar_html(totals, limit)}<div>{legend}</div>{items}{transforms}</div>"
