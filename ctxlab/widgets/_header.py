"""The Lab's first line: agent, model, window — and for a recording its view, what the file does
not record and how the estimates compare with the bill."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._cache_clock import LIVE_CLOCK, recording_clock_note
from ctxlab.analysis._cache_rules import cache_rules_for
from ctxlab.config._presets import describe_config
from ctxlab.io import Census
from ctxlab.models._demo import MADE_UP_USAGE, made_up_usage
from ctxlab.sources._replay import VIEWS

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched
    from ctxlab.analysis import CacheAgreement, Calibration
    from ctxlab.manifest import Thresholds
    from ctxlab.sources import ReplaySession

__all__ = [
    "FREQUENT_COMPACTIONS",
    "FREQUENT_WINDOW",
    "agreement_notes",
    "calibration_notes",
    "clock_note",
    "flag_notes",
    "frequent_note",
    "frequent_warning",
    "header_html",
    "loaded_notes",
    "made_up_notes",
    "model_html",
    "threshold_notes",
    "view_label",
]


def header_html(
    agent: Watched,
    recording: ReplaySession | None,
    calibration: Calibration | None,
    *,
    requests: int | None = None,
    title: str = "ctxlab",
    flags: Sequence[tuple[int, str]] = (),
) -> str:
    """The header of a Lab over ``agent`` (``recording``: the same, when it is a recording;
    ``requests``: say how many requests are shown, as the static views do; ``flags``: the
    requests whose calibrated estimate is flagged beside its bill, `StepLog.flags`)."""
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
        notes.extend(threshold_notes(recording))
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
    notes.append(html.escape(clock_note(agent, recording)))
    notes.extend(calibration_notes(calibration))
    notes.extend(agreement_notes(recording.cache_agreement if recording is not None else None))
    notes.extend(flag_notes(flags))
    notes.extend(made_up_notes(agent, recording, calibration))
    text = " · ".join(parts)
    if notes:
        text += (
            "<br><span class='ctxlab-notes' style='color:#555'>" + "<br>".join(notes) + "</span>"
        )
    return text


def clock_note(agent: Watched, recording: ReplaySession | None) -> str:
    """The clock the costs' prompt cache expires on: a live agent's wall clock, a recording's
    own times (or none: every cached prefix alive), with the lifetime its usage shows."""
    if recording is None:
        return LIVE_CLOCK
    models = recording.transcript.models
    model = models[0] if models else agent.model.name
    return recording_clock_note(recording.transcript, cache_rules_for(model))


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
    breaks = calibration.breaks
    broke = (
        f"; the bill broke from the fit at request{'s' if len(breaks) != 1 else ''} "
        f"{', '.join(map(str, breaks[:5]))}{', ...' if len(breaks) > 5 else ''} (what was sent "
        "beyond the file changed without the file saying so: the fixed part is measured again "
        "from each)"
        if breaks
        else ""
    )
    return [
        f"calibration: {fit.ratio:.3f} billed tokens per estimated token; calibrated estimate "
        f"{ahead}, {inside or 0:.1%} in sample (fitted on every request); before "
        f"calibration {stacked:.0%} with the unrecorded part, {raw:.0%} without{broke}"
    ]


SHOWN_DISAGREEING = 6
"""The requests that disagree with the bill the header names; the rest are counted."""


def agreement_notes(agreement: CacheAgreement | None) -> list[str]:
    """One line: how far the cache model's reads agree with the recording's bill
    (`CacheAgreement.line`) and the requests that disagree — none for a recording without
    cache usage."""
    if agreement is None:
        return []
    line = agreement.line
    disagreeing = [str(request) for request, _ in agreement.disagreeing]
    if disagreeing:
        named = ", ".join(disagreeing[:SHOWN_DISAGREEING])
        more = len(disagreeing) - SHOWN_DISAGREEING
        rest = f" and {more} more" if more > 0 else ""
        which = "request" if len(disagreeing) == 1 else "requests"
        line += f"; disagreeing: {which} {named}{rest} (recording.cache_check() says why)"
    return [html.escape(line)]


SHOWN_FLAGS = 3
"""The flagged requests the header names one by one; the rest are counted."""


def flag_notes(flags: Sequence[tuple[int, str]]) -> list[str]:
    """One line naming the requests whose calibrated estimate is flagged beside its bill (a bill
    of 0, an estimate more than `OFF_FACTOR` times off: `bill_flag`) — what the median error
    says nothing of — and that the plot leaves those estimates out of its scale."""
    if not flags:
        return []
    named = "; ".join(f"request {step}: {flag}" for step, flag in flags[:SHOWN_FLAGS])
    more = len(flags) - SHOWN_FLAGS
    rest = f"; {more} more (lab.steps, column calibration_flag)" if more > 0 else ""
    count = f"{len(flags)} request{'s' if len(flags) != 1 else ''}"
    return [
        f"<b style='color:#d62728'>flagged</b> ({count}, ⊗ on the plot; an estimate off its "
        f"bill is left out of the plot's scale): {html.escape(named + rest)}"
    ]


def threshold_notes(recording: ReplaySession) -> list[str]:
    """A recording *as recorded* carries no usage notice or trigger of ctxlab's, and its agent's
    own are not in the file: they are unknown, said so — not drawn, and never as 0."""
    if recording.view != "recorded":
        return []
    return [
        "usage notice and trigger: unknown (the recorded agent's own are not in the file; the "
        "replayed view draws ctxlab's)"
    ]


def loaded_notes(meta: Mapping[str, Any]) -> list[str]:
    """What loading the file read, left out and repaired (``meta["census"]``, else
    ``meta["skipped"]``; ``meta["repairs"]``), escaped, for the header: nothing a file held is
    dropped without the reader seeing it."""
    notes: list[str] = []
    census = Census.from_meta(meta.get("census"))
    skipped = meta.get("skipped")
    if census is not None:
        # What was read, used and skipped, in one line (`Census.summary`); what the file holds
        # that the transcript lacks (its inventory), in a line of its own.
        notes.append(html.escape(f"loaded: {census}"))
        if census.unplaced():
            notes.append(f"<b>{html.escape(census.unplaced_line())}</b>")
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


FREQUENT_WINDOW = 12
"""Requests looked back on when judging whether compactions come too often."""
FREQUENT_COMPACTIONS = 4
"""Compactions within `FREQUENT_WINDOW` requests that make the Lab warn."""


def frequent_note(recent_compactions: Callable[[int], int], lines: Thresholds) -> str:
    """The warning when compactions come too often (`FREQUENT_COMPACTIONS` within the last
    `FREQUENT_WINDOW` requests, as ``recent_compactions(window)`` counts them), else ``""``."""
    recent = recent_compactions(FREQUENT_WINDOW)
    return frequent_warning(recent, lines) if recent >= FREQUENT_COMPACTIONS else ""


def frequent_warning(recent: int, lines: Thresholds, window: int = FREQUENT_WINDOW) -> str:
    """The warning line when ``recent`` compactions came within ``window`` requests: what the
    thresholds leave between them and what to change."""
    return html.escape(
        f"{recent} compactions in the last {window} requests: the trigger "
        f"({lines.trigger_tokens:,} tokens) leaves little room above what a compaction keeps "
        f"({lines.reserve_tokens:,}-token tail plus the summary). Raise the trigger ratio or "
        "lower the reserve ratio in Config."
    )
