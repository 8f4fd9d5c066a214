"""The Lab's static views: the snapshot as an output of its own, kept at the latest state, and
the page of `Lab.report`.

A viewer without a kernel — nbconvert's HTML opened offline, the docs site, a notebook viewer —
cannot draw widgets: it shows the HTML beside them. Frozen at display time that HTML would say
"0 requests" for a Lab displayed before its session ran, so the Lab displays its snapshot as a
second output with a display id and updates it (throttled, and at the end of every call) as the
session runs; an executed notebook keeps the last one. A recording shown again in another view
or under another config freezes the snapshots displayed before: each keeps what its cell showed
(the cell that displayed it *as recorded* does not turn into the replay a later cell asked for).
Where the widgets do render, the context map's script marks the output area ``ctxlab-live`` and
a style rule hides the snapshot.
"""

from __future__ import annotations

import html as html_text
import math
import time
from typing import TYPE_CHECKING, Any

from ctxlab.util._html import MAX_ROWS, escape
from ctxlab.widgets._header import header_html, view_label
from ctxlab.widgets._snapshot import break_even_html, report_html, snapshot_html

if TYPE_CHECKING:
    from ctxlab.analysis import CacheAgreement
    from ctxlab.widgets._lab import Lab

__all__ = ["REFRESH_SECONDS", "StaticView", "agreement_html"]

REFRESH_SECONDS = 2.0
"""The least time between two updates while a session runs (each is a message to the page)."""


class StaticView:
    """The displays of one Lab's snapshot and how they are kept current."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.display_ids: list[str] = []
        """One per time the Lab was displayed."""
        self._last = 0.0
        self.updates = 0
        """How many updates were sent (what a test reads)."""

    def html(self, limit: int | None = MAX_ROWS) -> str:
        """The Lab as static HTML: its header (as the live Lab's, with the request count),
        budget bars of the latest ``limit`` requests (every one when None) with their bills, the
        latest manifest."""
        lab = self.lab
        recording = lab._recording()
        header = header_html(
            lab.agent,
            recording,
            lab.calibration,
            requests=len(lab.log),
            title="ctxlab Lab",
            flags=lab.log.flags(),
        )
        marks = [c.step for c in lab.log.compactions]
        calibrated = [row["calibrated"] for row in lab.log.rows]
        return snapshot_html(header, lab.log.manifests, marks, limit, calibrated)

    def report(self) -> str:
        """The self-contained page of `Lab.report`: what the session cost and what it is priced
        as, whether each compaction paid back the cache it broke, every request's bar, then its
        manifest."""
        lab = self.lab
        recording = lab._recording()
        view = view_label(recording) if recording is not None else "live"
        # Every request's bar, not the snapshot's latest 40: a report is read in full.
        agreement = recording.cache_agreement if recording is not None else None
        return report_html(
            f"ctxlab · {lab.agent.name} · {view}",
            self.pricing_html()
            + agreement_html(agreement)
            + break_even_html(lab.log.break_evens())
            + self.html(limit=None),
            lab.log.manifests,
        )

    def pricing_html(self) -> str:
        """The session's cost and the price it is computed with (model, list price, source,
        cache rules) — or ``unpriced (model X has no known price)``, never $0."""
        log = self.lab.log
        note = html_text.escape(log.pricing_note)
        if not len(log):
            return f"<p class='ctxlab-pricing'>costs: {note}</p>"
        # A Python sum: pandas' would skip NaN and call an unpriced session free.
        total = sum(float(c) for c in log.frame()["cost"])
        if math.isnan(total):
            return f"<p class='ctxlab-pricing' style='color:#c00'>cost: {note}</p>"
        billed = ""
        if log.billed:
            sources = list(log.frame()["priced_from"])
            billed = (
                f"; as recorded, {sources.count('usage'):,} priced from their recorded usage "
                f"(the bill, each at its own model's price), {sources.count('model'):,} by the "
                "cache model"
            )
        return (
            f"<p class='ctxlab-pricing'>cost: ${total:,.4f} over {len(log):,} requests (summary "
            f"calls included), priced as {note}{html_text.escape(billed)}</p>"
        )

    def bundle(self) -> dict[str, Any]:
        """The snapshot's output: HTML hidden where the widgets render, and plain text."""
        return {
            "text/html": f"<div class='ctxlab-static'>{self.html()}</div>",
            "text/plain": f"[ctxlab snapshot: {len(self.lab.log)} requests]",
        }

    def display(self) -> None:
        """Display the snapshot as a new output, remembered for updates."""
        from IPython.display import display

        handle = display(self.bundle(), raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if handle is not None:
            self.display_ids.append(handle.display_id)
        self._last = time.monotonic()

    def freeze(self) -> None:
        """Stop updating the snapshots displayed so far: the Lab is about to show something
        else (another view, another config). Each keeps the last state sent to it — a replay
        ends with a forced `refresh`, so that is the state it finished in (refreshing now would
        mix the view or config just chosen into the old requests)."""
        self.display_ids = []

    def refresh(self, *, force: bool = False) -> None:
        """Update every display of the snapshot (at most every `REFRESH_SECONDS` unless
        ``force``)."""
        if not self.display_ids:
            return
        now = time.monotonic()
        if not force and now - self._last < REFRESH_SECONDS:
            return
        from IPython.display import update_display

        self._last = now
        bundle = self.bundle()
        for display_id in self.display_ids:
            update_display(bundle, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
        self.updates += 1


def agreement_html(agreement: CacheAgreement | None) -> str:
    """The report's section on the cache model checked against the bill: the figure and every
    request that disagrees, with why (nothing for a recording without cache usage)."""
    if agreement is None:
        return ""
    rows = "".join(
        f"<tr><td style='padding:2px 6px'>{request}</td><td style='padding:2px 6px'>"
        f"{escape(why)}</td></tr>"
        for request, why in agreement.disagreeing
    )
    table = (
        f"<table class='ctxlab-disagreeing'><thead><tr><th>request</th><th>why the cache "
        f"model disagrees</th></tr></thead><tbody>{rows}</tbody></table>"
        if rows
        else "<p>every request agrees</p>"
    )
    return (
        f"<h3>Checked against the bill</h3><p class='ctxlab-agreement'>{escape(agreement.line)}"
        f"</p>{table}"
    )
