"""The Lab's first line: agent, model, window — and for a recording its view, what the file does
not record and how the estimates compare with the bill."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.io import Census
from ctxlab.sources._replay import VIEWS

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched
    from ctxlab.analysis import Calibration
    from ctxlab.manifest import Thresholds
    from ctxlab.sources import ReplaySession

__all__ = ["frequent_warning", "header_html", "loaded_notes"]


def header_html(
    agent: Watched, recording: ReplaySession | None, calibration: Calibration | None
) -> str:
    """The header of a Lab over ``agent`` (``recording``: the same, when it is a recording)."""
    parts = [
        "<b>ctxlab</b>",
        f"agent <code>{html.escape(agent.name)}</code>",
        f"model <code>{html.escape(agent.model.name)}</code>",
        f"window {agent.model.context_window:,} tokens",
    ]
    notes: list[str] = []
    fit = calibration.fit() if calibration is not None else None
    if recording is not None:
        parts.append(f"view: <b>{html.escape(VIEWS[recording.view])}</b>")
        if recording.unrecorded:
            missing = ", ".join(recording.unrecorded)
            estimate = (
                f" — about {fit.fixed[min(fit.fixed)]:,.0f} billed tokens a request, "
                "estimated from the first requests' bill"
                if fit is not None
                else " — no usage recorded to estimate them from"
            )
            notes.append(f"not recorded in the file: {html.escape(missing)}{estimate}")
        if recording.compactions:
            count = len(recording.compactions)
            notes.append(
                f"{count} recorded compaction{'s' if count != 1 else ''} "
                "(the session's own, marked ◆)"
            )
        notes.extend(loaded_notes(recording.transcript.meta))
    error = calibration.median_error if calibration is not None else None
    if calibration is not None and fit is not None and error is not None:
        notes.append(
            f"calibration: {fit.ratio:.3f} billed tokens per estimated token, "
            f"median error {error:.1%} after calibration "
            f"({calibration.raw_median_error or 0:.0%} before)"
        )
    text = " · ".join(parts)
    if notes:
        text += (
            "<br><span class='ctxlab-notes' style='color:#555'>" + "<br>".join(notes) + "</span>"
        )
    return text


def loaded_notes(meta: Mapping[str, Any]) -> list[str]:
    """What loading the file read, left out and repaired (``meta["census"]``, else
    ``meta["skipped"]``; ``meta["repairs"]``), escaped, for the header: nothing a file held is
    dropped without the reader seeing it."""
    notes: list[str] = []
    census = Census.from_meta(meta.get("census"))
    skipped = meta.get("skipped")
    if census is not None:
        # What was read, used and skipped, in one line (`Census.summary`).
        notes.append(html.escape(f"loaded: {census}"))
    elif isinstance(skipped, Mapping) and skipped:
        ranked = sorted(skipped.items(), key=lambda kv: -int(kv[1]))
        listed = ", ".join(f"{int(n):,} {kind}" for kind, n in ranked[:4])
        more = f", {len(ranked) - 4} more kinds" if len(ranked) > 4 else ""
        total = sum(int(n) for n in skipped.values())
        notes.append(html.escape(f"not messages, left out: {total:,} ({listed}{more})"))
    repairs = meta.get("repairs")
    if isinstance(repairs, list) and repairs:
        first = str(repairs[0])
        notes.append(
            html.escape(
                f"{len(repairs)} repair{'s' if len(repairs) != 1 else ''} ({first}"
                + (", ..." if len(repairs) > 1 else "")
                + ")"
            )
        )
    return notes


def frequent_warning(recent: int, window: int, lines: Thresholds) -> str:
    """The warning line when ``recent`` compactions came within ``window`` requests: what the
    thresholds leave between them and what to change."""
    return html.escape(
        f"{recent} compactions in the last {window} requests: the trigger "
        f"({lines.trigger_tokens:,} tokens) leaves little room above what a compaction keeps "
        f"({lines.reserve_tokens:,}-token tail plus the summary). Raise the trigger ratio or "
        "lower the reserve ratio in Config."
    )
