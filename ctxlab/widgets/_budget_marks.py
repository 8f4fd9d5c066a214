"""Where the budget plot marks a compaction: one ctxlab ran (on the request it ran in, or half
a step after it) and one a recording holds (half a step before the first request after it, on
that request's bill), with the words its hover shows — whether it paid back the cache it broke
(`StepLog.break_evens`), escaped: plotly reads hover text as HTML."""

from __future__ import annotations

import html
from collections.abc import Iterator

from ctxlab.manifest import Transform
from ctxlab.widgets._steps import StepLog

__all__ = ["MARKERS", "compaction_marks", "recorded_marks", "recorded_symbols"]

MARKERS = (
    ("compaction", "star", "#9467bd"),
    ("offload", "triangle-up", "#17becf"),
    ("omission", "x", "#e377c2"),
    # The recorded session's own compactions (a Claude Code /compact), not ctxlab's.
    ("recorded compaction", "diamond", "#ff7f0e"),
    # Requests whose calibrated estimate must not be read beside the bill unsaid (a bill of 0,
    # an estimate more than 1.5 times off): marked on the bill, the estimate left out.
    ("flagged", "circle-x-open", "#d62728"),
)
"""The budget plot's markers: name, symbol and colour, in the order of their traces."""


def compaction_marks(log: StepLog) -> tuple[list[float], list[float], list[str]]:
    # A compaction inside a request sits on that request's total; one between requests
    # (manual, agentic) half a step later, at the total minus what it removed.
    xs: list[float] = []
    ys: list[float] = []
    text: list[str] = []
    evens = _sentences(log) if log.compactions else {}
    for mark in log.compactions:
        total = log.rows[mark.step]["total"] if 0 <= mark.step < len(log.rows) else 0
        xs.append(mark.step + (0 if mark.within else 0.5))
        removed = 0 if mark.within else mark.tokens_before - mark.tokens_after
        ys.append(max(total - removed, 0))
        where = f"in request {mark.step}" if mark.within else f"after request {mark.step}"
        said = f"{mark.label} {where}: {mark.tokens_before:,} → {mark.tokens_after:,}"
        text.append(_with(said, evens.get(mark.step + (not mark.within))))
    return xs, ys, text


def recorded_marks(log: StepLog) -> tuple[list[float], list[float], list[str]]:
    # Half a step before the first request after it, on the bill of that request (what the
    # session's context came down to), or its estimate when nothing was billed.
    xs: list[float] = []
    ys: list[float] = []
    text: list[str] = []
    evens = _sentences(log) if log.recorded_compactions else {}
    for step, t, late, site in _recorded(log):
        after = t.tokens_after
        xs.append(step + 0.5 if late else step - 0.5)
        ys.append(after if after is not None else log.rows[step]["total"])
        before = f"{t.tokens_before:,}" if t.tokens_before is not None else "?"
        billed = f"{after:,} billed" if after is not None else "no request after it"
        said = (
            f"recorded compaction ({t.detail or 'trigger unknown'}) "
            f"{'after' if late else 'before'} request {step}: {before} → {billed}"
        )
        # Its break-even where its own requests are shown (not on ctxlab's replay).
        own = not late and log.rows[step]["call"] == "recorded"
        parts = [site[0]] if site is not None else []
        if own and step in evens:
            parts += evens[step].split("; ")
        text.append(_with(said, "; ".join(parts) or None))
    return xs, ys, text


def recorded_symbols(log: StepLog) -> list[str]:
    """Each recorded compaction's marker: crossed where it fired far from the threshold its
    tool documents (`ctxlab.compaction_sites`)."""
    far = MARKERS[3][1] + "-x"
    return [far if site and site[1] else MARKERS[3][1] for *_, site in _recorded(log)]


def _recorded(log: StepLog) -> Iterator[tuple[int, Transform, bool, tuple[str, bool] | None]]:
    # Each recorded compaction's transform: its request, whether it came after the last one,
    # and where it fired (the sites are the compactions before a request, in order).
    if not log.recorded_compactions:  # a live session: no manifest to read
        return
    rank = 0
    for step, manifest in enumerate(log.manifests):
        for t in manifest.transforms:
            if t.kind != "recorded_compaction":
                continue
            late = t.target == "after"  # the session's last: after this request
            site = None
            if not late and "microcompact" not in (t.detail or ""):
                site = log.sites[rank] if rank < len(log.sites) else None
                rank += 1
            yield step, t, late, site


def _sentences(log: StepLog) -> dict[int, str]:
    # The break-even of each compaction, by the first request after it.
    return {even.request: even.sentence for even in log.break_evens()}


def _with(said: str, sentence: str | None) -> str:
    # The mark's own words and its break-even, each escaped (a detail comes from a file), the
    # sentence a line per clause: a hover box is narrow.
    text = html.escape(said)
    if sentence is None:
        return text
    return text + "".join(f"<br>{html.escape(part)}" for part in sentence.split("; "))
