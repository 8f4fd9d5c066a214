"""Static HTML of ctxlab's objects: what a notebook shows without a kernel (GitHub, nbviewer,
an exported HTML file). Plain tables and inline-styled bars, no JavaScript; every text escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxlab._config import ContextConfig
    from ctxlab._replay import Transcript
    from ctxlab._step_source import StepSource
    from ctxlab.agent import Agent
    from ctxlab.manifest import ContextManifest

__all__ = [
    "agent_html",
    "config_html",
    "manifest_html",
    "steps_html",
    "table_html",
    "transcript_html",
]

_STYLE = "border-collapse:collapse;font-size:12px"
_MAX_ROWS = 40
PLACEMENT_COLORS = {
    "system": "#4c78a8",
    "tools": "#72b7b2",
    "summary": "#b279a2",
    "conversation": "#f58518",
    "transient": "#54a24b",
    "references": "#eeca3b",
}
"""One colour per placement, for every view: the Lab's plot, the static snapshot (and the
context map's front end, `widgets/context_map.js`, which repeats them)."""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def table_html(
    rows: Iterable[Sequence[Any]], columns: Sequence[str], limit: int = _MAX_ROWS
) -> str:
    """An escaped HTML table (at most ``limit`` rows, then a line saying how many more)."""
    rows = list(rows)
    head = "".join(f"<th style='text-align:left;padding:2px 6px'>{_e(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:2px 6px'>{_e(v)}</td>" for v in row) + "</tr>"
        for row in rows[:limit]
    )
    more = (
        f"<tr><td colspan='{len(columns)}'><i>… {len(rows) - limit} more</i></td></tr>"
        if len(rows) > limit
        else ""
    )
    return (
        f"<table style='{_STYLE}'><thead><tr>{head}</tr></thead><tbody>{body}{more}</tbody></table>"
    )


def _bar(totals: Mapping[str, int], scale: int) -> str:
    parts = "".join(
        f"<span title='{_e(p)}: {t}' style='display:inline-block;height:10px;"
        f"width:{100 * t / max(scale, 1):.2f}%;background:{PLACEMENT_COLORS.get(p, '#999')}'></span>"
        for p, t in totals.items()
        if t
    )
    return f"<div style='width:100%;background:#eee;white-space:nowrap'>{parts}</div>"


def manifest_html(manifest: ContextManifest) -> str:
    """A request at a glance: tokens by placement against the limit, items, transforms."""
    totals = manifest.totals
    limit = manifest.input_limit if manifest.input_limit > 0 else manifest.estimated_input_tokens
    head = (
        f"<b>request {_e(manifest.request_id)}</b> · {_e(manifest.purpose)} · "
        f"{manifest.estimated_input_tokens:,} of {manifest.input_limit:,} input tokens · "
        f"{_e(manifest.validation)}"
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
        f"<span style='color:{PLACEMENT_COLORS[p]}'>■</span> {_e(p)} {t:,}"
        for p, t in totals.items()
        if t
    )
    return f"<div>{head}{_bar(totals, limit)}<div>{legend}</div>{items}{transforms}</div>"


def config_html(config: ContextConfig) -> str:
    """The tunable fields with their values; those that differ from the defaults in bold."""
    from ctxlab._config import ContextConfig
    from ctxlab._config_fields import tunable_fields

    default = ContextConfig()
    rows = []
    for field in tunable_fields(type(config)):
        value = getattr(config, field.name)
        changed = value != getattr(default, field.name, value)
        shown = f"<b>{_e(value)}</b>" if changed else _e(value)
        rows.append(f"<tr><td style='padding:2px 6px'>{_e(field.title)}</td><td>{shown}</td></tr>")
    return f"<b>ContextConfig</b><table style='{_STYLE}'>{''.join(rows)}</table>"


def transcript_html(transcript: Transcript) -> str:
    """A recorded session at a glance: where it came from, its size, its first words."""
    roles: dict[str, int] = {}
    calls = 0
    for message in transcript.messages:
        roles[message.role] = roles.get(message.role, 0) + 1
        calls += len(getattr(message, "tool_uses", ()))
    from ctxlab.messages import TextBlock

    first = next(
        (b.text for m in transcript.messages for b in m.content if isinstance(b, TextBlock)), ""
    )
    facts = [
        ["source", transcript.meta.get("source", "ctxlab")],
        [
            "messages",
            f"{len(transcript.messages)} ({roles.get('user', 0)} user, {roles.get('assistant', 0)} assistant)",
        ],
        ["tool calls", calls],
        ["tool schemas", len(transcript.tools)],
        ["steps with provider usage", len(transcript.usage)],
        ["first user words", first[:300] + ("…" if len(first) > 300 else "")],
    ]
    return f"<b>Transcript {_e(transcript.name)}</b>" + table_html(facts, ["", ""])


def steps_html(
    manifests: Sequence[ContextManifest], marks: Iterable[int] = (), limit: int | None = _MAX_ROWS
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
        f"<div style='flex:1 1 auto;min-width:0'>{_bar(m.totals, scale)}</div>"
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
        f"{shown}<div class='ctxlab-steps' style='{_STYLE};width:100%;min-width:20em'>{rows}</div>"
        f"<div>{legend} · ★ compaction</div>"
    )


def agent_html(agent: Agent) -> str:
    """The agent at a glance: model, window, what its context holds, its latest request."""
    model = agent.model
    facts: list[list[Any]] = [
        ["model", f"{model.name} ({model.context_window:,}-token window)"],
        ["tools", ", ".join(t.name for t in agent.tool_schemas()) or "none"],
        [
            "in context",
            f"{len(agent.context.conversation)} messages"
            + (" and a summary" if agent.context.summary else ""),
        ],
        ["said in all", f"{len(agent.history)} messages"],
        ["requests prepared", len(agent.manifests)],
    ]
    latest = manifest_html(agent.manifests[-1]) if agent.manifests else ""
    return f"<b>Agent {_e(agent.name)}</b>" + table_html(facts, ["", ""]) + latest


def snapshot_html(
    agent: Agent | StepSource,
    manifests: Sequence[ContextManifest],
    marks: Iterable[int] = (),
    limit: int | None = _MAX_ROWS,
) -> str:
    """A Lab as static HTML: its header, budget bars per request (the latest ``limit``; all of
    them when None), the latest manifest."""
    head = (
        f"<b>ctxlab Lab</b> · agent <code>{_e(agent.name)}</code> · model "
        f"<code>{_e(agent.model.name)}</code> · window "
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
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title></head>"
        f"<body style='font-family:sans-serif;max-width:1100px;margin:auto'>"
        f"{snapshot}<h3>Every request</h3>{''.join(sections)}</body></html>"
    )
