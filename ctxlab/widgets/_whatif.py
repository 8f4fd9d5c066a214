"""The what-if lab: one recorded session replayed under several configs, side by side.

A plotly figure (a `LivePlot`, plotly.js kept out of the saved widget state) overlays each
config's tokens per request and, dashed on the right axis, its cumulative cost (summary calls
included), with the provider's billed input when the transcript has it; a table compares tokens
sent, cost, compactions, retention, peak and failures; any step of any config opens in the
manifest panel, and two configs can be compared item by item at that step.

A slider answers at once: the status line says what is computed the moment it moves; a value
shown before, or replayed ahead while the user read (`Ahead`: a step either way), is taken as
it was; any other is replayed from the first request whose decision may differ. The token
lines and the headline figures (requests, compactions, peak, errors, where a replay stopped,
requests over the limit by the bill) are redrawn, a note says retention and cost are coming,
and they fill in (`WhatIfLab.filling`) once the nearest values are replayed ahead. A newer
move cancels what an older one was still computing.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as w
import plotly.graph_objects as go

from ctxlab.analysis._cost import CacheRules, Price
from ctxlab.analysis._priced_references import reference_limit
from ctxlab.analysis._unrecorded import UnrecordedTokens, unrecorded_note
from ctxlab.analysis._whatif import WhatIf
from ctxlab.config._config import ContextConfig, named_configs
from ctxlab.exceptions import UsageError
from ctxlab.io._source import SessionSource, transcript_of
from ctxlab.messages._request import ModelRequest
from ctxlab.tokens import TokenCounter
from ctxlab.util._checks import shown
from ctxlab.util._gc import collector_paused
from ctxlab.widgets._panels import ManifestPanel, _table
from ctxlab.widgets._plot import LivePlot
from ctxlab.widgets._whatif_ahead import (
    SLIDERS,
    Ahead,
    computing_status,
    moved_status,
    slider_value,
)
from ctxlab.widgets._whatif_figure import curves, whatif_layout
from ctxlab.widgets._whatif_table import ComparisonTable, scrolling

__all__ = ["WhatIfLab"]

_DEFAULT_PRESETS = ("ctxlab", "agentscope", "observation_masking")


class WhatIfLab:
    """Several configs over one transcript (see the module's documentation). Build it with
    `open`; display ``lab`` (or ``lab.widget``)."""

    def __init__(self, what: WhatIf) -> None:
        if not isinstance(what, WhatIf):
            msg = (
                f"WhatIfLab shows a WhatIf, got {shown(what)}: open one with "
                "await WhatIfLab.open(transcript, configs, context_window=...)"
            )
            raise UsageError(msg)
        self.what = what
        self.task: asyncio.Task[Any] | None = None
        self.filling: asyncio.Task[Any] | None = None
        """The grading and pricing a slider's move left to do (None when nothing is left)."""
        self.runner = Ahead(what)
        """Replays the configs a next move may ask for while the user reads (`Ahead`)."""
        names = list(what.runs)
        self.plot = LivePlot(go.Figure(layout=whatif_layout(priced=what.price.known)))
        self.comparison = ComparisonTable(what)
        self.table = self.comparison.table
        self.computing = self.comparison.computing
        """Says which configs' retention and cost are still being computed (empty when none)."""
        self._build_controls(names)
        self._syncing = False
        self.config_picker.observe(lambda _: self._picked(), names="value")
        for slider in self.sliders.values():
            slider.observe(self._slider_moved, names="value")
        for control in (self.step, self.step_config, self.diff_a, self.diff_b):
            control.observe(lambda _: self._render_step(), names="value")
        self.header = w.HTML(_header_html(what))
        self.widget = w.VBox(
            [
                self.header,
                self.plot.view,
                self.table,
                self.computing,
                w.HBox([self.config_picker, *self.sliders.values()]),
                self.status,
                w.HBox([self.step_config, self.step]),
                self.manifest.widget,
                w.HTML("<b>What A sent that B did not, and the reverse, at this step</b>"),
                w.HBox([self.diff_a, self.diff_b]),
                self.diff,
            ]
        )
        self._load_sliders()
        self.redraw()

    def _build_controls(self, names: list[str]) -> None:
        # The tuning sliders of the picked config, the step and its config, the two configs
        # compared item by item.
        self.config_picker = w.Dropdown(options=names, value=names[0], description="tune")
        self.sliders = {
            name: w.FloatSlider(
                min=lo,
                max=hi,
                step=step,
                description=name.replace("_", " "),
                style={"description_width": "130px"},
                continuous_update=False,
            )
            for name, (lo, hi, step) in SLIDERS.items()
        }
        self.status = w.HTML()
        self.step = w.IntSlider(min=0, max=0, description="step", continuous_update=False)
        self.step_config = w.Dropdown(options=names, value=names[0], description="config")
        self.manifest = ManifestPanel()
        self.diff_a = w.Dropdown(options=names, value=names[0], description="A")
        self.diff_b = w.Dropdown(options=names, value=names[-1], description="B")
        self.diff = w.HTML()

    @classmethod
    async def open(
        cls,
        transcript: SessionSource,
        configs: Mapping[str, ContextConfig] | None = None,
        *,
        context_window: int,
        counter: TokenCounter | None = None,
        unrecorded_tokens: UnrecordedTokens = None,
        price: Price | None = None,
        rules: CacheRules | None = None,
    ) -> WhatIfLab:
        """Replay ``transcript`` — a `Transcript`, a path `ctxlab.load` reads, or a row of
        `ctxlab.sessions`, as `Lab.open` takes — under ``configs`` (three presets when omitted:
        ctxlab's defaults, AgentScope's, observation masking) and show them
        (``unrecorded_tokens``, ``price``, ``rules``: see `ctxlab.WhatIf`; the table says what
        the costs are priced as, or that the recording's model is unpriced)."""
        defaults = configs is None or (isinstance(configs, Mapping) and not configs)
        chosen = (
            {n: ContextConfig.preset(n) for n in _DEFAULT_PRESETS}
            if defaults
            else named_configs(configs)
        )
        what = WhatIf(
            transcript_of(transcript, taker="WhatIfLab.open"),
            chosen,
            context_window=context_window,
            counter=counter,
            price=price,
            rules=rules,
            unrecorded_tokens=unrecorded_tokens,
        )
        await what.run()
        lab = cls(what)
        lab.runner.read(lab.config_picker.value)
        return lab

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        # Beside the live widget, what a viewer without a kernel shows: the comparison table.
        bundle["text/html"] = self.header.value + self.table.value
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"WhatIfLab(session={self.what.transcript.name!r}, configs={list(self.what.runs)})"

    # -- tuning -------------------------------------------------------------------------------

    def _picked(self) -> None:
        self._load_sliders()
        self.runner.read(self.config_picker.value)

    def _load_sliders(self) -> None:
        config = self.what.runs[self.config_picker.value].config
        self._syncing = True
        try:
            for name, slider in self.sliders.items():
                slider.value = getattr(config, name)
        finally:
            self._syncing = False

    def _slider_moved(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        values = {name: slider_value(slider.value) for name, slider in self.sliders.items()}
        name = self.config_picker.value
        # The first visible change, before any replay: what is being computed.
        self.status.value = html.escape(computing_status(name, values))
        self.task = asyncio.ensure_future(self.tune(name, **values))

    async def tune(self, name: str, **fields: Any) -> None:
        """Change fields of config ``name`` (e.g. ``trigger_ratio=0.6``), replay it and redraw
        its lines and headline figures at once, then its retention and cost when computed
        (returns when all are shown, or when a newer move took over), while the slider's
        neighbouring values are replayed ahead (`Ahead`). An invalid combination is shown in
        the status line and changes nothing."""
        run = self.what._run(name)
        try:
            config = ContextConfig.model_validate({**run.config.model_dump(), **fields})
        except ValueError as exc:
            self.status.value = f"<span style='color:#c00'>{html.escape(str(exc))}</span>"
            return
        if self.filling is not None:
            self.filling.cancel()  # an older move's figures: no longer asked for
        # A value being replayed ahead finishes there; the others' replays stop.
        await self.runner.finish(name, config)
        kept = self.what.kept_run(name, config)
        # The collector runs after the lines are drawn, not in the middle of the move.
        with collector_paused():
            done = await self.what.set_config(name, config)
            self.status.value = html.escape(moved_status(done, kept=kept is not None))
            # A change made from code shows in the widgets: the tuned config, its values.
            if self.config_picker.value != name:
                self.config_picker.value = name  # loads its sliders, reads ahead from them
            else:
                self._picked()
            self.redraw(analyse=False)
        filling = self.filling = asyncio.ensure_future(self._fill())
        try:
            await filling
        except asyncio.CancelledError:
            if not filling.cancelled():
                raise  # this task itself was cancelled, not the filling a newer move replaced

    async def _fill(self) -> None:
        """Once the nearest slider values are replayed ahead (`Ahead.nearest`), price, then
        grade, each config not yet analysed; redraw once all are."""
        await self.runner.nearest()
        for run in list(self.what.runs.values()):
            await asyncio.sleep(0)  # what was drawn goes out first; a newer move may cancel
            run.costs  # noqa: B018 - priced on first read
            await asyncio.sleep(0)
            run.steps  # noqa: B018 - graded on first read
        self.filling = None
        self.redraw()

    # -- drawing ------------------------------------------------------------------------------

    def redraw(self, *, analyse: bool = True) -> None:
        """Redraw the curves, the table and the selected step; ``analyse`` False draws only
        what needs neither the grader nor the pricer, and says what is being computed."""
        runs = self.what.runs
        ready = analyse or all(r.graded and r.priced for r in runs.values())
        longest = max((len(r.prepared) for r in runs.values()), default=1)
        # The table first: when it is the whole one, it prices what the cost lines draw.
        self.comparison.show(complete=ready)
        self._draw_curves(longest)
        self.step.max = max(longest - 1, 0)
        self._render_step()

    def _draw_curves(self, longest: int) -> None:
        traces, peak = curves(self.what.runs, self._usage(), self._input_limit(), longest)
        yaxis = {**self.plot.layout.get("yaxis", {}), "range": [0, max(peak, 1) * 1.08]}
        self.plot.data = traces
        self.plot.relayout(yaxis=yaxis)
        self.plot.push()

    def _input_limit(self) -> int:
        """The input limit the configs are replayed against: the engine's (`reference_limit`)."""
        return reference_limit(self.what.runs.values(), self.what.context_window)

    def _usage(self) -> list[int | None]:
        transcript = self.what.transcript
        if not transcript.usage:
            return []
        run = next(iter(self.what.runs.values()))
        return [
            u.total_input_tokens if (u := transcript.usage.get(s.index)) else None
            for s in run.prepared
        ]

    def _render_step(self) -> None:
        step = self.step.value
        run = self.what.runs[self.step_config.value]
        if step < len(run.prepared):
            # A replay keeps the state, not the request: its messages describe the items.
            state = run.prepared[step].state
            request = ModelRequest(system="", messages=state.conversation)
            self.manifest.show(step, run.prepared[step].manifest, request)
        a, b = self.diff_a.value, self.diff_b.value
        runs = self.what.runs
        if a == b or step >= min(len(runs[a].prepared), len(runs[b].prepared)):
            self.diff.value = "<i>pick two configs that both reached this step</i>"
            return
        frame = self.what.diff(a, b, step)
        # What was dropped, readable: kind, source, a preview of its text, tokens (escaped).
        columns = ["side", "kind", "source", "what", "tokens", "id"]
        rows = [[getattr(r, c) for c in columns] for r in frame.itertuples()]
        self.diff.value = (
            scrolling(_table(rows, columns, "ctxlab-diff")) if rows else "<i>the same items</i>"
        )


def _header_html(what: WhatIf) -> str:
    """The lab's first line: the session, the window, how many configs — and what the
    recording does not hold of each request (its size and how it is known, or that every
    figure excludes it)."""
    unseen = unrecorded_note(what.transcript, what.unrecorded)
    return (
        f"<b>ctxlab what-if</b> · {html.escape(what.transcript.name)} · window "
        f"{what.context_window} tokens · {len(what.runs)} configs"
        + (f"<br><span style='color:#555'>{html.escape(unseen)}</span>" if unseen else "")
    )
