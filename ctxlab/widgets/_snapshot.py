"""The Lab as static HTML: its header, a bar per request, the latest manifest — the snapshot a
viewer without a kernel shows — and the self-contained report of a whole session."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ctxlab.manifest._html import manifest_html
from ctxlab.util._html import MAX_ROWS, PLACEMENT_COLORS, STYLE, bar_html, escape

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched
    from ctxlab.manifest import ContextManifest

__all__ = ["report_html", "snapshot_html", "steps_html"]


def steps_html(
    manifests: Sequence[ContextManifest], marks: Iterable[int] = (), limit: int | None = MAX_ROWS
) -> str:
    """One bar per request, tokens by placement against the largest input limit (compaction
    steps marked): the Lab's budget plot as static HTML — the latest ``limit`` requests, with a
    line saying so (all of them when ``limit`` is None).

    Rows are flex boxes, not a table: notebook and docs themes restyle tables (right-aligned
    cells, inline-block tables), which squeezed the bars and clipped the totals."""
    if not manifests:
        return "<i>no requests yet</i>"
    scale = max(max(m.input_limit, m.estimated_input_tokens) for m in manifests)
    marked = set(marks)
    first = 0 if limit is None else max(len(manifests) - limit, 0)
    cell = "font-size:11px;white-space:nowrap;flex:none"
    rows = "".join(
        f"<div style='display:flex;align-items:center;gap:6px;width:100%'>"
        f"<div style='{cell};width:4.5em;text-align:left'>{n}{' ★' if n in marked else ''}</div>"
        f"<div style='flex:1 1 auto;min-width:0'>{bar_html(m.totals, scale)}</div>"
        f"<div style='{cell};width:6.5em;text-align:right'>{m.estimated_input_tokens:,}</div>"
        "</div>"
        for n, m in enumerate(manifests[first:], start=first)
    )
    legend = " ".join(f"<span style='color:{c}'>■</span> {p}" for p, c in PLACEMENT_COLORS.items())
    shown = (
        f"<div><i>the last {len(manifests) - first} of {len(manifests)} requests "
        f"(requests {first} to {len(manifests) - 1})</i></div>"
        if first
        else ""
    )
    return (
        f"{shown}<div class='ctxlab-steps' style='{STYLE};width:100%;min-width:20em'>{rows}</div>"
        f"<div>{legend} · ★ compaction</div>"
    )


def snapshot_html(
    agent: Watched,
    manifests: Sequence[ContextManifest],
    marks: Iterable[int] = (),
    limit: int | None = MAX_ROWS,
) -> str:
    """A Lab as static HTML: its header, budget bars per request (the latest ``limit``; all of
    them when None), the latest manifest."""
    head = (
        f"<b>ctxlab Lab</b> · agent <code>{escape(agent.name)}</code> · model "
        f"<code>{escape(agent.model.name)}</code> · window "
        f"{agent.model.context_window:,} tokens · {len(manifests)} requests"
    )
    latest = manifest_html(manifests[-1]) if manifests else ""
    return f"<div>{head}{steps_html(manifests, marks, limit)}{latest}</div>"


def report_html(title: str, snapshot: str, manifests: Sequence[ContextManifest]) -> str:
    """A self-contained page: ``snapshot``, then every request's manifest (the last open)."""
    sections = [
        f"<details{' open' if n == len(manifests) - 1 else ''}><summary>request {n}</summary>"
        f"{manifest_html(m)}</details>"
        for n, m in enumerate(manifests)
    ]
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title></head>"
        f"<body style='font-family:sans-serif;max-width:1100px;margin:auto'>"
        f"{snapshot}<h3>Every request</h3>{''.join(sections)}</body></html>"
    )
