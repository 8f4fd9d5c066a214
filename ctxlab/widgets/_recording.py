"""What a Lab over a recording adds: the two views, replaying under a config, the bill.

A recording (`ctxlab.sources.ReplaySession`) is read-only: the Lab shows it as recorded or
replayed under the config in force, and reconciles the estimates with the recorded usage
(`ctxlab.calibrate`). The Lab keeps its live-agent half; this module keeps the rest, so each
reads on its own.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ctxlab.analysis._calibration import Calibration
from ctxlab.analysis._compaction_sites import sites_in
from ctxlab.analysis._prices import recorded_model
from ctxlab.exceptions import UsageError
from ctxlab.sources._replay import VIEWS, ReplaySession, View
from ctxlab.widgets._lab_selection import render_later
from ctxlab.widgets._steps import StepLog

if TYPE_CHECKING:
    from ctxlab.widgets._lab import Lab

__all__ = ["PROGRESS_SECONDS", "RecordingView", "progress_line"]


PROGRESS_SECONDS = 0.25
"""The least time between two progress lines while a recording is read (each is a message to
the page)."""


def progress_line(
    show: Callable[[int], None], clock: Callable[[], float] = time.monotonic
) -> Callable[[int, int], None]:
    """A step source's ``on_progress`` that calls ``show(done)`` at most once a
    `PROGRESS_SECONDS` (on ``clock``), and at the last request."""
    # By time, not every n requests: reading 5,000 recorded requests takes about a second, and
    # a line every 25 was 200 messages the page had to take before the plot.
    shown = [-PROGRESS_SECONDS]

    def progress(done: int, total: int) -> None:
        now = clock()
        if done == total or now - shown[0] >= PROGRESS_SECONDS:
            shown[0] = now
            show(done)

    return progress


class RecordingView:
    """The view buttons of a Lab over ``recording`` and what they do.

    Args:
        lab: The Lab that shows the recording (its log, plot, panels and status line).
        recording: The step source that replays the recording.
    """

    def __init__(self, lab: Lab, recording: ReplaySession) -> None:
        self.lab = lab
        self.recording = recording
        self.picker = w.ToggleButtons(
            options=[(label, key) for key, label in VIEWS.items()],
            value=recording.view,
            description="view",
            style={"button_width": "auto"},
        )
        self.picker.observe(lambda c: self.show(c["new"]), names="value")
        self.calibration: Calibration | None = recording.calibration

    def new_log(self) -> StepLog:
        """An empty step log, calibrated (the recorded view by segment: each compaction of the
        recorded agent restarts its fixed part)."""
        # Priced as the recorded model: the replayed requests are named for the replay. As
        # recorded, each request with usage costs its bill.
        log = StepLog(
            model=recorded_model(self.recording.transcript.meta),
            price=self.lab.price,
            billed=self.recording.view == "recorded",
        )
        log.clock = self.recording.request_times  # the recording's clock, filled as it is read
        if self.recording.compactions:  # where each fired against its tool's threshold
            # The recorded view's own pass over the requests: not a second one.
            tool = self.recording.transcript.meta.get("source")
            sites = sites_in(self.recording.recorded(), tool if isinstance(tool, str) else None)
            log.sites = [(site.sentence, site.far) for site in sites]
        if self.calibration is not None:
            log.calibrate(self.calibration, segmented=self.recording.view == "recorded")
        return log

    async def replay(self) -> None:
        """Show the recording again from the start in its view, with progress in the status
        line, and leave the line finished with what changed."""
        lab, recording = self.lab, self.recording
        status = lab.controls.status
        before = lab.log.summary() if len(lab.log) else None
        lab.log = self.new_log()
        lab.selected = None
        total = recording.request_count
        verb = "replaying" if recording.view == "replayed" else "reading"
        status.value = html.escape(f"{verb} {total:,} requests…")

        def show(done: int) -> None:
            status.value = html.escape(f"{verb} {total:,} requests… {done:,} done")

        recording.on_progress = progress_line(show)
        # The page loads plotly.js while the requests are read (the first Lab of a kernel).
        lab.budget.plot.view.send_plotly_ahead()
        lab.reading = True
        try:
            await recording.run()
        finally:
            recording.on_progress = None
            lab.reading = False
        last = len(lab.log) - 1
        lab._draw(select=last if last >= 0 else None)
        if last >= 0:
            render_later(lab, last)  # its panels after the plot
        after = lab.log.summary()
        what = (
            "replayed under the config in force" if recording.view == "replayed" else "as recorded"
        )
        change = f" (was {before})" if before is not None and before != after else ""
        # The progress line stays, finished: a replay of a few requests is over before a
        # reader sees its progress.
        stopped = (
            f" · stopped at request {len(lab.log) - 1}: {recording.stopped}"
            if recording.view == "replayed" and recording.stopped
            else ""
        )
        status.value = html.escape(
            f"{verb} {total:,} requests… done · read-only recording · {len(lab.log):,} "
            f"requests {what}: {after}{change}{stopped}"
        )

    def show(self, view: View) -> asyncio.Task[Any] | None:
        """Switch to ``view`` and replay; the task, or None when nothing changes."""
        if view not in VIEWS:
            msg = f"view must be one of {list(VIEWS)}, got {view!r}"
            raise UsageError(msg)
        if self.recording.view == view and len(self.lab.log):
            return None
        self.recording.view = view
        self.picker.value = view  # the observer finds the view in force: no-op
        self.lab.task = asyncio.ensure_future(self.lab.replay())
        return self.lab.task

    def config_applied(self) -> None:
        """A config was applied in the Config tab: replay under it (switching to that view)."""
        if self.recording.view == "recorded":
            # A config changes ctxlab's requests, not the recorded ones: show those.
            self.lab.config.status.value = html.escape(
                "Applied: the recording is replayed under it (view: replayed under a config)"
            )
            self.recording.view = "replayed"
            self.picker.value = "replayed"
        else:
            self.lab.config.status.value = html.escape(
                "Applied: the recording is replayed under it"
            )
        self.lab.task = asyncio.ensure_future(self.lab.replay())
