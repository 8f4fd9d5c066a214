"""`ForkLab`: the branches of a fork side by side — their budget curves overlaid, where each
run's context parted from the reference's marked, the outcome table, each run's manifests and
context at any step, and a static report.

Every figure comes from the engine (`ctxlab.fork.Outcomes`: steps, costs, verdicts, where a
context parts); this module only draws them. What a tool or a model wrote is escaped.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
import plotly.graph_objects as go

from ctxlab.fork import ARRIVALS, BranchRun, Outcomes
from ctxlab.manifest import ContextManifest
from ctxlab.manifest._html import manifest_html
from ctxlab.messages._request import ModelRequest
from ctxlab.tokens import TokenCache, default_counter
from ctxlab.util._checks import instance_of, sequence_of
from ctxlab.util._files import write_atomic
from ctxlab.widgets._panels import ContextPanel, ManifestPanel
from ctxlab.widgets._plot import LivePlot
from ctxlab.widgets._snapshot import steps_html

__all__ = ["ForkLab", "run_steps"]

_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_REASONING = ("reasoning", "recovery")


def run_steps(run: BranchRun) -> tuple[list[ContextManifest], list[ModelRequest | None]]:
    """A run's steps in its own telling: the manifests of its reasoning requests from the
    session's start (those before the fork are the branch's), and the requests it sent from
    the fork on (None before it: a branch keeps the manifests of its past, not its requests,
    unless the fork's arrival made them)."""
    before = [m for m in run.branch.point.manifests if m.purpose in _REASONING]
    own = [m for m in run.manifests if m.purpose in _REASONING]
    past: list[ModelRequest | None] = list(run.branch.before)
    past += [None] * (len(before) - len(past))
    return [*before, *own], [*past[: len(before)], *run.requests]


class ForkLab:
    """The outcomes of `run_forward` in a notebook. Display it (``lab`` as a cell's last
    value); ``original`` are the origin session's manifests (drawn grey, for comparison)."""

    def __init__(
        self, outcomes: Outcomes, *, original: Sequence[ContextManifest] | None = None
    ) -> None:
        instance_of(outcomes, Outcomes, "outcomes", "the Outcomes of ctxlab.fork.run_forward")
        manifests = () if original is None else original
        manifests = sequence_of(manifests, ContextManifest, "original", "a list of manifests")
        self.outcomes = outcomes
        self.original = [m for m in manifests if m.purpose in _REASONING]
        self.plot = LivePlot(
            go.Figure(
                layout={
                    "height": 340,
                    "margin": {"l": 50, "r": 10, "t": 30, "b": 40},
                    "title": {"text": "Input tokens per request, by branch", "x": 0.01},
                    "xaxis": {"title": "request", "rangemode": "tozero", "dtick": 1},
                    "yaxis": {"title": "input tokens", "rangemode": "tozero"},
                    "legend": {"orientation": "h", "y": -0.25},
                    "hovermode": "closest",
                }
            )
        )
        self.table = w.HTML(outcomes.table_html())
        names = list(dict.fromkeys(r.branch.name for r in outcomes.runs))
        self.branch = w.Dropdown(options=names, value=names[0], description="branch")
        self.run = w.Dropdown(options=[0], value=0, description="run")
        self.step = w.IntSlider(min=0, max=0, description="request", continuous_update=False)
        self.manifest = ManifestPanel()
        self.context = ContextPanel()
        self.tabs = w.Tab(
            children=[self.manifest.widget, self.context.widget], titles=("Manifest", "Context")
        )
        self.header = w.HTML(self._header())
        self.branch.observe(lambda _: self._runs(), names="value")
        for control in (self.run, self.step):
            control.observe(lambda _: self._render(), names="value")
        self.tabs.observe(lambda _: self._render(), names="selected_index")
        self.widget = w.VBox(
            [
                self.header,
                self.plot.view,
                self.table,
                w.HTML("<b>Each run, request by request</b>"),
                w.HBox([self.branch, self.run, self.step]),
                self.tabs,
            ]
        )
        self.redraw()
        self._runs()

    def _header(self) -> str:
        runs = self.outcomes.runs
        branches = list(dict.fromkeys(r.branch.name for r in runs))
        first = runs[0].branch
        return (
            f"<b>ctxlab forks</b> · {html.escape(first.origin)} · {len(branches)} branches × "
            f"{len(runs) // max(len(branches), 1)} runs · forked at request "
            f"{', '.join(sorted({str(r.branch.at) for r in runs}))} "
            f"({html.escape(', '.join(sorted({ARRIVALS[r.branch.arrival] for r in runs})))}) · "
            f"contexts compared with <b>{html.escape(self.outcomes.reference)}</b>"
        )

    def _runs_of(self, name: str) -> list[BranchRun]:
        return [r for r in self.outcomes.runs if r.branch.name == name]

    def selected(self) -> BranchRun:
        """The run picked in the branch and run menus."""
        return next(r for r in self._runs_of(self.branch.value) if r.run == self.run.value)

    # -- drawing ------------------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw every run's curve, the fork and where each run's context parted."""
        traces: list[Any] = []
        if self.original:
            traces.append(
                go.Scatter(
                    x=list(range(len(self.original))),
                    y=[m.estimated_input_tokens for m in self.original],
                    name="original session",
                    mode="lines",
                    line={"color": "#999", "width": 3},
                    hovertemplate="%{y:,} tokens<extra>original</extra>",
                )
            )
        marks: list[tuple[int, int, str]] = []
        names = list(dict.fromkeys(r.branch.name for r in self.outcomes.runs))
        for run in self.outcomes.runs:
            manifests, _ = run_steps(run)
            color = _COLORS[names.index(run.branch.name) % len(_COLORS)]
            traces.append(_run_trace(run, manifests, color))
            at = self.outcomes.row(run)["diverges_at"]
            if at is not None and at < len(manifests):
                label = f"{run.branch.name} · run {run.run}"
                marks.append((at, manifests[at].estimated_input_tokens, label))
        traces.append(_parting_marks(marks, self.outcomes.reference))
        layout = dict(self.plot.layout)
        forks = sorted({r.branch.first_step for r in self.outcomes.runs})
        layout["shapes"] = [_fork_line(at) for at in forks]
        layout["annotations"] = [
            {"x": at, "y": 1, "yref": "paper", "text": "fork", "showarrow": False} for at in forks
        ]
        self.plot.set_figure(go.Figure(traces, layout=layout))

    def _runs(self) -> None:
        runs = self._runs_of(self.branch.value)
        self.run.options = [r.run for r in runs]
        self.run.value = runs[0].run
        self._render()

    def _render(self) -> None:
        run = self.selected()
        manifests, requests = run_steps(run)
        self.step.max = max(len(manifests) - 1, 0)
        if not manifests:
            return
        step = min(self.step.value, len(manifests) - 1)
        request = requests[step] if step < len(requests) else None
        if self.tabs.selected_index == 1:
            cache = run.agent.token_cache if run.agent is not None else _cache()
            self.context.show(step, request, cache, manifests[step])
            return
        previous = requests[step - 1] if 0 < step <= len(requests) else None
        self.manifest.show(step, manifests[step], request, previous=previous)

    # -- static views -------------------------------------------------------------------------

    def report(self, path: str | os.PathLike[str]) -> Path:
        """Write the forks as one self-contained HTML file (no script): the outcome table,
        then each run's requests as budget bars and every manifest."""
        sections = []
        for run in self.outcomes.runs:
            manifests, _ = run_steps(run)
            first = run.branch.first_step
            details = "".join(
                f"<details><summary>request {n}{' (before the fork)' if n < first else ''}"
                f"</summary>{manifest_html(m)}</details>"
                for n, m in enumerate(manifests)
            )
            outcome = "passed the check" if run.passed else "did not pass the check"
            said = html.escape(run.error or (run.reply or "")[:300])
            sections.append(
                f"<h3>{html.escape(run.branch.name)} · run {run.run} · {outcome}</h3>"
                f"<p>{said}</p>{steps_html(manifests, limit=None)}{details}"
            )
        page = (
            "<!doctype html><html><head><meta charset='utf-8'><title>ctxlab forks</title></head>"
            "<body style='font-family:sans-serif;max-width:1100px;margin:auto'>"
            f"<div>{self._header()}</div>{self.outcomes.table_html()}{''.join(sections)}"
            "</body></html>"
        )
        return write_atomic(path, page, what="report")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        # Beside the live widget, what a viewer without a kernel shows: the outcome table.
        bundle["text/html"] = f"<div>{self._header()}</div>{self.outcomes.table_html()}"
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"ForkLab({self.outcomes!r})"


def _cache() -> TokenCache:
    # A run made on a worker came back without its agent: counts for the Context panel.
    return TokenCache(default_counter())


def _run_trace(run: BranchRun, manifests: Sequence[ContextManifest], color: str) -> Any:
    """One run's curve: its requests' estimated input tokens."""
    label = f"{run.branch.name} · run {run.run}"
    return go.Scatter(
        x=list(range(len(manifests))),
        y=[max(m.estimated_input_tokens, 0) for m in manifests],
        # Escaped: plotly reads tags in names and texts (it shows the entities).
        name=html.escape(label),
        legendgroup=html.escape(run.branch.name),
        mode="lines+markers",
        marker={"size": 5},
        line={"color": color, "dash": "solid" if run.run == 0 else "dot"},
        hovertemplate="%{y:,} tokens<extra>" + html.escape(label) + "</extra>",
    )


def _parting_marks(marks: Sequence[tuple[int, int, str]], reference: str) -> Any:
    """Crosses where each run's context parted from ``reference``'s."""
    return go.Scatter(
        x=[m[0] for m in marks],
        y=[m[1] for m in marks],
        name="context parts from the reference",
        mode="markers",
        marker={"symbol": "x", "size": 12, "color": "#000"},
        text=[
            f"{html.escape(label)}: its context parts from "
            f"{html.escape(reference)}'s at request {x}"
            for x, _, label in marks
        ],
        hovertemplate="%{text}<extra></extra>",
    )


def _fork_line(at: int) -> dict[str, Any]:
    """A dashed vertical line at the request where a branch forks."""
    return {
        "type": "line",
        "x0": at,
        "x1": at,
        "y0": 0,
        "y1": 1,
        "yref": "paper",
        "line": {"dash": "dash", "color": "#555", "width": 1},
    }
