"""The Lab as static HTML: its header, a bar per request, the latest manifest — the snapshot a
viewer without a kernel shows — and the self-contained report of a whole session.

They tell what the live Lab tells: the same header (the view, what the file does not record,
the calibration), each request's bill beside its estimate, the session's own compactions (◆)
beside ctxlab's (★).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxlab.analysis._breakeven import BreakEven
from ctxlab.manifest import ContextManifest
from ctxlab.manifest._html import manifest_html
from ctxlab.util._html import MAX_ROWS, PLACEMENT_COLORS, STYLE, bar_html, escape

__all__ = ["break_even_html", "report_html", "snapshot_html", "steps_html"]

BILLED_COLOR = "#111111"
"""The billed input's tick on a bar (the live plot's "provider usage" line)."""


def _billed(manifest: ContextManifest) -> int | None:
    usage = manifest.provider_usage
    return usage.total_input_tokens if usage is not None else None


def _recorded(manifest: ContextManifest) -> bool:
    return any(t.kind == "recorded_compaction" for t in manifest.transforms)


def _bar(manifest: ContextManifest, scale: int) -> str:
    """The request's bar, with its bill as a tick at its place on the same scale."""
    bar = bar_html(manifest.totals, scale)
    billed = _billed(manifest)
    if billed is None:
        return bar
    at = min(100 * billed / max(scale, 1), 100.0)
    tick = (
        f"<span title='billed {billed:,}' style='position:absolute;top:-2px;bottom:-2px;"
        f"left:calc({at:.2f}% - 1px);width:2px;background:{BILLED_COLOR}'></span>"
    )
    return f"<div style='position:relative'>{bar}{tick}</div>"


def steps_html(
    manifests: Sequence[ContextManifest],
    marks: Iterable[int] = (),
    limit: int | None = MAX_ROWS,
    calibrated: Sequence[int | None] = (),
) -> str:
    """One bar per request, tokens by placement against the largest input limit, estimate or
    bill (ctxlab's compaction steps marked ★, the recorded session's own ◆; the bill a tick on
    the bar and a figure beside the estimate, with ``calibrated``, the calibrated estimate of
    each request): the Lab's budget plot as static HTML — the latest ``limit`` requests, with a
    line saying so (all of them when ``limit`` is None).

    Rows are flex boxes, not a table: notebook and docs themes restyle tables (right-aligned
    cells, inline-block tables), which squeezed the bars and clipped the totals."""
    if not manifests:
        return "<i>no requests yet</i>"
    scale = max(max(m.input_limit, m.estimated_input_tokens, _billed(m) or 0) for m in manifests)
    marked = set(marks)
    billed_any = any(_billed(m) is not None for m in manifests)
    first = 0 if limit is None else max(len(manifests) - limit, 0)
    cell = "font-size:11px;white-space:nowrap;flex:none"
    width = "20em" if calibrated and billed_any else "12em" if billed_any else "6.5em"
    rows = "".join(
        f"<div style='display:flex;align-items:center;gap:6px;width:100%'>"
        f"<div style='{cell};width:4.5em;text-align:left'>{n}{' ★' if n in marked else ''}"
        f"{' ◆' if _recorded(m) else ''}</div>"
        f"<div style='flex:1 1 auto;min-width:0'>{_bar(m, scale)}</div>"
        f"<div style='{cell};width:{width};text-align:right'>"
        f"{_figures(m, calibrated[n] if n < len(calibrated) else None)}</div>"
        "</div>"
        for n, m in enumerate(manifests[first:], start=first)
    )
    shown = (
        f"<div><i>the last {len(manifests) - first} of {len(manifests)} requests "
        f"(requests {first} to {len(manifests) - 1})</i></div>"
        if first
        else ""
    )
    return (
        f"{shown}<div class='ctxlab-steps' style='{STYLE};width:100%;min-width:20em'>{rows}</div>"
        f"<div>{_legend(manifests, billed_any)}</div>"
    )


def _figures(m: ContextManifest, calibrated: int | None) -> str:
    """A request's estimate, with its bill and its calibrated estimate when known."""
    billed = _billed(m)
    text = f"{m.estimated_input_tokens:,}"
    if billed is not None:
        text += f" · billed {billed:,}"
    if calibrated is not None:
        text += f" · calibrated {calibrated:,}"
    return text


def _legend(manifests: Sequence[ContextManifest], billed_any: bool) -> str:
    """The placements' colours, and the marks that appear."""
    legend = " ".join(f"<span style='color:{c}'>■</span> {p}" for p, c in PLACEMENT_COLORS.items())
    legend += " · ★ compaction"
    if any(_recorded(m) for m in manifests):
        legend += " · ◆ the recorded session's own compaction"
    if billed_any:
        legend += (
            f" · <span style='color:{BILLED_COLOR}'>▍</span> billed input "
            "(input + cache reads + cache writes)"
        )
    return legend


def snapshot_html(
    header: str,
    manifests: Sequence[ContextManifest],
    marks: Iterable[int] = (),
    limit: int | None = MAX_ROWS,
    calibrated: Sequence[int | None] = (),
) -> str:
    """A Lab as static HTML: ``header`` (the live Lab's, as HTML: agent, model, window,
    requests, the view, what the file does not record, the calibration), then budget bars per
    request (the latest ``limit``; all of them when None) and the latest manifest."""
    latest = manifest_html(manifests[-1]) if manifests else ""
    return (
        f"<div><div class='ctxlab-header'>{header}</div>"
        f"{steps_html(manifests, marks, limit, calibrated)}{latest}</div>"
    )


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


def break_even_html(evens: Sequence[BreakEven]) -> str:
    """Whether each compaction paid back the cache it broke, a line each (escaped), with how
    many did; "" without a compaction."""
    if not evens:
        return ""
    paid = sum(e.paid_back for e in evens)
    lines = "".join(
        f"<li>request {e.request} · {escape(e.label)}: {escape(e.sentence)}</li>" for e in evens
    )
    return (
        f"<div class='ctxlab-break-even'><b>Compactions: {paid} of {len(evens)} paid back the "
        f"cache they broke</b><ul>{lines}</ul></div>"
    )
