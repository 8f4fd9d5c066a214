"""`Lab`: an observable agent in a notebook — the dashboard and the data behind it.

The Lab subscribes to the agent's events (the engine knows nothing of widgets) and keeps one row
per reasoning request. Calls run as tasks on the kernel's event loop, so buttons and sliders keep
working while the agent does: Send and Compact now return at once and the panels follow the
events. ``await lab.send(...)`` in a cell waits for the call (the panels still update live).
"""

from __future__ import annotations

import asyncio
import html
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import ipywidgets as w

from ctxlab.analysis._calibration import Calibration
from ctxlab.analysis._price import Price, checked_price
from ctxlab.config._config import ContextConfig
from ctxlab.events import CompactionEvent, ContextBuildEvent, Event, ModelResponseEvent
from ctxlab.io._source import SessionSource, transcript_of
from ctxlab.manifest import Thresholds
from ctxlab.messages import AssistantMessage
from ctxlab.pipeline import CompactionRecord
from ctxlab.sources._replay import ReplaySession, View
from ctxlab.tokens import TokenCounter
from ctxlab.util._files import write_atomic
from ctxlab.widgets._budget import BudgetPanel
from ctxlab.widgets._calls import LiveCalls
from ctxlab.widgets._config_panel import ConfigPanel
from ctxlab.widgets._controls import Controls
from ctxlab.widgets._fork_panel import ForkPanel
from ctxlab.widgets._header import frequent_note, header_html
from ctxlab.widgets._lab_args import a_recording, watched
from ctxlab.widgets._lab_selection import (
    Shown,
    open_item,
    render_selection,
    tab_changed,
)
from ctxlab.widgets._magics import remember
from ctxlab.widgets._map import ContextMap
from ctxlab.widgets._panels import ContextPanel, ManifestPanel
from ctxlab.widgets._recording import RecordingView
from ctxlab.widgets._sources_panel import SourcesPanel
from ctxlab.widgets._static import StaticView
from ctxlab.widgets._steps import StepLog, step_number
from ctxlab.widgets._table import Opener

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.agent._watched import Watched

__all__ = ["Lab"]

_TABS = ("Manifest", "Context", "Config", "Sources", "Fork")


class Lab:
    """A dashboard around ``agent``: budget plot, context map, manifest, context, config,
    sources, controls. Display it (``lab`` as a cell's last value, or ``display(lab)``).

    Args:
        agent: The agent to observe and steer.
        follow: Select each new request as it arrives (else keep the user's selection).
        price: The price of the agent's model, for the steps' costs (its own, `price_for`,
            when omitted: a model no table knows is unpriced, its costs NaN).
    """

    def __init__(self, agent: Watched, *, follow: bool = True, price: Price | None = None) -> None:
        watched(agent)
        self.agent = agent
        self._unrendered = False  # the selection's panels wait for `render_later`'s turn
        self.follow = follow
        self.reading = False  # a recording being read: its panels are drawn when it ends
        self.price = checked_price(price)
        self.log = StepLog(price=self.price)
        self.selected: int | None = None
        self.task: asyncio.Task[Any] | None = None
        self.last_error: BaseException | None = None
        self._build_panels()
        self._wire_panels()
        self.header = w.HTML()
        """The Lab's first line: agent, model, window — and for a recording its view, what the
        file does not record and how the estimates compare with the bill."""
        self.recording: RecordingView | None = None
        """A recording's views, replay and bill (`RecordingView`); None over a live agent."""
        top: list[w.Widget] = [self.header]
        recording = self._recording()
        if recording is not None:
            self.recording = RecordingView(self, recording)
            self.log = self.recording.new_log()
            top.append(self.recording.picker)
        self._calibration: Calibration | None = None  # a live agent's, refitted after each call
        self.widget = w.VBox([*top, self.controls.widget, self.budget.widget, self._map, self.tabs])
        self._update_header()
        self._static = StaticView(self)
        remember(self)  # the current Lab of %%ctx and %ctx_budget
        self._follow_agent()

    def _build_panels(self) -> None:
        # The plot, the map, the tabs' panels and the controls, each told what to call back.
        self.budget = BudgetPanel(self.select, on_units=self._redraw)
        self._map = ContextMap()
        self._manifest = ManifestPanel()
        self._context = ContextPanel()
        # A control moved: the lines' next point follows it (3 ms at 5,000 requests).
        self.config = ConfigPanel(self.agent, self._config_applied, on_moved=self._redraw)
        self.sources = SourcesPanel(self.agent)
        self.controls = Controls()
        self.calls = LiveCalls(self)
        """Send, Compact and Stop on a live agent (`LiveCalls`)."""
        self.forks = ForkPanel(self)  # fork at the selected request (`ForkPanel`)
        panels = (self.manifest, self.context, self.config, self.sources, self.forks)
        self.tabs = w.Tab(children=[panel.widget for panel in panels], titles=_TABS)

    def _wire_panels(self) -> None:
        # A tab, a map segment, a table row or a button clicked: what the Lab does.
        self.tabs.observe(lambda _: self._tab_changed(), names="selected_index")
        self.map.observe(lambda change: self.open_item(change["new"]), names="selected")
        self.manifest.table.observe(lambda change: self.open_item(change["new"]), names="selected")
        # A click on what is already selected changes no trait: the views say so in a message.
        for view in (self.map, self.manifest.table):
            Opener(view)(lambda item_id: self.open_item(item_id, again=True))
        self.controls.send_button.on_click(lambda _: self.start(self.controls.prompt.value))
        self.controls.compact_button.on_click(
            lambda _: self.start_compaction(self.controls.hint.value)
        )
        self.controls.stop_button.on_click(lambda _: self.stop())

    def _follow_agent(self) -> None:
        # The steps the agent made before this Lab existed (earlier calls, a resumed session),
        # then its events as they come.
        agent = self.agent
        for manifest in agent.manifests:
            self.log.feed(ContextBuildEvent(manifest))
        self._unsubscribe = agent.subscribe(self._on_event)
        self._closed = False
        self._draw()
        if len(self.log):
            self.select(len(self.log) - 1)
        if agent.capabilities.read_only:
            # A recording or another framework's agent: nothing to send or compact from here.
            for button in (self.controls.send_button, self.controls.compact_button):
                button.disabled = True
            self.controls.status.value = f"<span>{html.escape(agent.capabilities.note)}</span>"

    @classmethod
    async def open(
        cls,
        transcript: SessionSource,
        *,
        context_window: int,
        config: ContextConfig | None = None,
        counter: TokenCounter | None = None,
        view: View = "recorded",
        unrecorded_tokens: int | str | None = None,
    ) -> Lab:
        """A Lab over a recorded session (`ctxlab.load`; a path, a `ctxlab.sessions` row) in one
        of two views: ``"recorded"`` — the requests its agent sent (what was billed); or
        ``"replayed"`` — ctxlab's pipeline under ``config``. What the file does not hold of each
        request is a ``not recorded`` placement, sized from the bill or by ``unrecorded_tokens``
        (`ctxlab.sources.ReplaySession`)."""
        session = ReplaySession(
            transcript_of(transcript, taker="Lab.open"),
            context_window=context_window,
            config=config,
            counter=counter,
            view=view,
            unrecorded_tokens=unrecorded_tokens,
        )
        lab = cls(session)
        await lab.replay()
        return lab

    async def replay(self) -> None:
        """Show the recording again from the start in its view — replayed under the config in
        force (what Apply does), or as recorded — with progress in the status line."""
        recording = a_recording(self.recording, "replays")
        # The snapshots displayed so far keep what they showed (a cell that displayed the
        # recording as recorded still shows it so after a later cell replays it).
        self._static.freeze()
        await recording.replay()
        self._update_header()
        self._static.refresh(force=True)

    def show_view(self, view: View) -> asyncio.Task[Any] | None:
        """Show a recording ``"recorded"`` or ``"replayed"`` (what the view buttons do); returns
        the task that replays it (await it in a cell), None when nothing changes."""
        return a_recording(self.recording, "has views").show(view)

    @property
    def view_picker(self) -> w.ToggleButtons | None:
        """A recording's two views (`VIEWS`): picking one shows the recording that way."""
        return self.recording.picker if self.recording is not None else None

    @property
    def calibration(self) -> Calibration | None:
        """The estimates reconciled with the provider's bill (`ctxlab.calibrate`), where usage
        was recorded or reported; fills the steps' ``calibrated`` column."""
        if self.recording is not None:
            return self.recording.calibration
        return self._calibration

    # The selection's panels: reading one fills it first when its render waits (`Shown`).
    map: Shown[ContextMap] = Shown("_map")
    """The context map of the selected request."""
    manifest: Shown[ManifestPanel] = Shown("_manifest")
    """The Manifest tab: the selected request's items, transforms and diff."""
    context: Shown[ContextPanel] = Shown("_context")
    """The Context tab: the selected request's messages."""

    # -- data ---------------------------------------------------------------------------------

    @property
    def steps(self) -> pd.DataFrame:
        """One row per reasoning request: tokens by placement, limits, validation, transforms,
        compaction, provider usage."""
        return self.log.frame()

    def items(self, step: int = -1) -> pd.DataFrame:
        """The items of request ``step`` (the latest by default), one row each."""
        return self.log.manifest(step).items_frame()

    def transforms(self, step: int = -1) -> pd.DataFrame:
        """The transforms of request ``step`` (the latest by default), one row each."""
        return self.log.manifest(step).transforms_frame()

    def next_thresholds(self) -> Thresholds:
        """The thresholds (usage notice, trigger, input limit, ...) the next request will use,
        as the engine computes them (the plot draws them as lines)."""
        return self.agent.next_thresholds()

    def next_lines(self) -> Thresholds:
        """Deprecated: `next_thresholds` (one name for the thresholds)."""
        warnings.warn("Lab.next_lines() is now Lab.next_thresholds()", DeprecationWarning, 2)
        return self.next_thresholds()

    # -- events -------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        step = self.log.feed(event)
        if step is None or self.reading:
            return  # a recording is drawn once, when read: at each request it cost n² in all
        if isinstance(event, ModelResponseEvent):
            self.budget.update_usage(self.log)  # only the provider-usage line moves
            return
        built = isinstance(event, ContextBuildEvent)
        follow = built and (self.follow or self.selected is None)
        # The selection line moves in the same update of the plot as the new request.
        self._draw(select=step if follow else None)
        if built:
            self.sources.sync()  # a source edited in code shows in its editor
            self.config.sync()  # and a config assigned in code in the Config tab
        if follow:
            self.select(step, plot=False)
        elif isinstance(event, CompactionEvent) and self.selected == step:
            self._render_selection()
        if isinstance(event, CompactionEvent):
            self._warn_if_frequent()
        self._static.refresh()

    def _redraw(self) -> None:
        self._draw(select=self.selected)

    def _draw(self, select: int | None = None) -> None:
        # The budget plot from the log, and one x further the lines the Config tab shows — none
        # for a recording as recorded (no next request; its agent's lines are not in the file).
        recording = self._recording()
        recorded = recording is not None and recording.view == "recorded"
        ahead = None if recorded else self.config.lines_ahead()
        self.budget.update(self.log, ahead, select=select, applied=self.config.pending is None)

    def _warn_if_frequent(self) -> None:
        warning = frequent_note(self.log.recent_compactions, self.next_thresholds())
        if warning:
            self.controls.warning.value = warning

    def _config_applied(self, config: ContextConfig) -> None:
        if self.recording is not None:
            self.recording.config_applied()
            return
        self._draw()

    def _update_header(self) -> None:
        self.header.value = header_html(
            self.agent, self._recording(), self.calibration, flags=self.log.flags()
        )

    # -- selection ----------------------------------------------------------------------------

    def select(self, step: int, *, plot: bool = True) -> None:
        """Show request ``step`` in the plot, the map, the manifest and the context panels."""
        step = step_number(step)
        if not 0 <= step < len(self.log):
            return
        self.selected = step
        if plot:
            self.budget.select(step)
        self.forks.sync()
        self._render_selection()

    def _tab_changed(self) -> None:
        tab_changed(self)

    def _render_selection(self) -> None:
        self._unrendered = False  # this render supersedes one waiting
        render_selection(self)

    def _render_deferred(self) -> None:
        if self._unrendered and not self._closed:
            self._render_selection()

    def open_item(self, item_id: str, *, again: bool = False) -> None:
        """Open item ``item_id`` of the selected request: outlined in the map, marked in the
        Manifest table, and its block opened at the top of the Context tab.

        What a click on a map segment or a table row does.
        """
        open_item(self, item_id, again=again)

    # -- actions (a live agent's: `LiveCalls`) ------------------------------------------------

    def start(self, message: str) -> asyncio.Task[Any] | None:
        """Start a call in the background (what Send does); returns its task."""
        return self.calls.start(message)

    async def send(self, message: str, *, raise_errors: bool = True) -> AssistantMessage | None:
        """Run one call of the agent while the panels update. A failure is shown in the status
        line, kept in ``lab.last_error`` and raised (``raise_errors=False``, what the Send
        button uses, returns None instead). A Stop is not a failure: the call ends, the
        conversation is kept, and None is returned."""
        return await self.calls.send(message, raise_errors=raise_errors)

    def start_compaction(self, hint: str = "") -> asyncio.Task[Any]:
        """Compact now, in the background (what the button does); returns the task."""
        return asyncio.ensure_future(self.compact(hint))

    async def compact(self, hint: str = "") -> CompactionRecord | None:
        """Compact the working context now whatever its size (with an optional hint)."""
        return await self.calls.compact(hint)

    def stop(self) -> None:
        """Stop the running call at its next step boundary."""
        self.calls.stop()

    def _recording(self) -> ReplaySession | None:
        # What only a recording has (its views, transcript, recorded compactions), when the
        # source says it replays.
        return cast(ReplaySession, self.agent) if self.agent.capabilities.replays else None

    # -- display ------------------------------------------------------------------------------

    def close(self) -> None:
        """Unsubscribe from the agent and close the widgets."""
        if not self._closed:
            self._unsubscribe()
            self._closed = True
            self.widget.close()

    def _ipython_display_(self) -> None:
        # Two outputs: the live widget, and the snapshot a viewer without a kernel shows (kept
        # at the latest state: see `StaticView`).
        from IPython.display import display

        remember(self)
        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["text/plain"] = repr(self)  # not the widget tree's repr, where it is all one sees
        display(bundle, raw=True)  # type: ignore[no-untyped-call]
        self._static.display()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        remember(self)
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        # Beside the live widget, a static snapshot: what a viewer without a kernel shows.
        bundle["text/html"] = self.snapshot_html()
        bundle["text/plain"] = repr(self)
        return bundle

    def report(self, path: str | os.PathLike[str]) -> Path:
        """Write the session as one self-contained HTML file (no script, opens in any
        browser): the Lab's header (the view, what the file does not record, the calibration),
        the budget bars of every request with its bill, then each request's items, what was
        done to them and why. The file gets the permissions of a file you create (your umask),
        or keeps those of the file it replaces."""
        return write_atomic(path, self._static.report(), what="report")

    def snapshot_html(self) -> str:
        """The dashboard as static HTML: the header, budget bars per request with the bill,
        the latest manifest — what a viewer without a kernel shows."""
        return self._static.html()

    def __repr__(self) -> str:
        return f"Lab(agent={self.agent.name!r}, steps={len(self.log)})"
