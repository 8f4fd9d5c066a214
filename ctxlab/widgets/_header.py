"""The Lab's first line: agent, model, window — and for a recording its view, what the file does
not record and how the estimates compare with the bill."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.config._presets import describe_config
from ctxlab.io import Census
from ctxlab.models._demo import MADE_UP_USAGE, made_up_usage
from ctxlab.sources._replay import VIEWS

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched
    from ctxlab.analysis import Calibration
    from ctxlab.manifest import Thresholds
    from ctxlab.sources import ReplaySession

__all__ = [
    "calibration_notes",
    "frequent_warning",
    "header_html",
    "loaded_notes",
    "made_up_notes",
    "model_html",
    "view_label",
]


def header_html(
    agent: Watched,
    recording: ReplaySession | None,
    calibration: Calibration | None,
    *,
    requests: int | None = None,
    title: str = "ctxlab",
) -> str:
    """The header of a Lab over ``agent`` (``recording``: the same, when it is a recording;
    ``requests``: say how many requests are shown, as the static views do)."""
    parts = [
        f"<b>{html.escape(title)}</b>",
        f"agent <code>{html.escape(agent.name)}</code>",
        model_html(agent, recording),
        f"window {agent.model.context_window:,} tokens",
    ]
    if requests is not None:
        parts.append(f"{requests:,} request{'s' if requests != 1 else ''}")
    notes: list[str] = []
    if recording is not None:
        parts.append(f"view: <b>{html.escape(view_label(recording))}</b>")
        if recording.unrecorded_note:
            # Carried as its own placement ("not recorded") in both views, or excluded: said.
            notes.append(html.escape(recording.unrecorded_note))
        if recording.compactions:
            count = len(recording.compactions)
            notes.append(
                f"{count} recorded compaction{'s' if count != 1 else ''} "
                "(the session's own, marked ◆)"
            )
        notes.extend(loaded_notes(recording.transcript.meta))
        subagents = recording.transcript.meta.get("subagents")
        if isinstance(subagents, list) and subagents:
            # Each is a conversation of its own, with its own bill: never spliced in here.
            notes.append(
                f"{len(subagents)} subagent{'s' if len(subagents) != 1 else ''} apart, each "
                f"with its own requests and bill: ctxlab.load(path, episode=1…{len(subagents)})"
            )
    notes.extend(calibration_notes(calibration))
    notes.extend(made_up_notes(agent, recording, calibration))
    text = " · ".join(parts)
    if notes:
        text += (
            "<br><span class='ctxlab-notes' style='color:#555'>" + "<br>".join(notes) + "</span>"
        )
    return text


def made_up_notes(
    agent: Watched, recording: ReplaySession | None, calibration: Calibration | None
) -> list[str]:
    """A word when the usage the estimates are calibrated on is the demo model's made-up count
    (a live demo agent, or a recording of one), not a provider's bill."""
    if calibration is None or calibration.fit() is None:
        return []
    meta = recording.transcript.meta if recording is not None else {}
    if not made_up_usage({**meta, "model": agent.model.name}):
        return []
    return [html.escape(f"the calibration is on {MADE_UP_USAGE}")]


def model_html(agent: Watched, recording: ReplaySession | None) -> str:
    """The model a header names: the agent's; for a recording, the models the file says
    answered (not the step source's stand-in name, ``replay of …``)."""
    if recording is None:
        return f"model <code>{html.escape(agent.model.name)}</code>"
    models = recording.transcript.models
    if not models:
        return "model not recorded"
    names = ", ".join(f"<code>{html.escape(m)}</code>" for m in models)
    return f"{'models' if len(models) > 1 else 'model'} {names} (recorded)"


def view_label(recording: ReplaySession) -> str:
    """Which view of ``recording`` is shown: ``as recorded``, or ``replayed under`` the config
    in force (``the defaults``, a preset's name, or what differs from the defaults)."""
    if recording.view == "recorded":
        return VIEWS["recorded"]
    return f"replayed under {describe_config(recording.context_config)}"


def calibration_notes(calibration: Calibration | None) -> list[str]:
    """How far the estimates are from the bill, out of sample first (each request forecast by
    a fit that never saw it), the in-sample figure labelled as such."""
    fit = calibration.fit() if calibration is not None else None
    if calibration is None or fit is None:
        return []
    inside = calibration.median_error
    outside = calibration.out_of_sample_error
    raw = calibration.raw_median_error or 0
    stacked = calibration.unrecorded_median_error or 0
    ahead = (
        f"median error {outside:.1%} out of sample (each request forecast from "
        f"{html.escape(calibration.forecast_from)})"
        if outside is not None
        else "no request to forecast out of sample"
    )
    return [
        f"calibration: {fit.ratio:.3f} billed tokens per estimated token; calibrated estimate "
        f"{ahead}, {inside or 0:.1%} in sample (fitted on every request); before "
        f"calibration {stacked:.0%} with the unrecorded part, {raw:.0%} without"
    ]


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
