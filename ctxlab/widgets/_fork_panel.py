"""The Lab's Fork tab: fork the session at the selected request under the configs picked, run
each branch forward, and open the result (`ForkLab`) below.

The fork itself is the engine's (`ctxlab.fork.fork` and `run_forward`); what the tab cannot ask
(the workspace a branch starts from, the outcome check, a recording's model and tools) is set
in code once: ``lab.forks.options.update(workspace=..., check=...)``.
"""

from __future__ import annotations

import asyncio
import atexit
import html
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import ipywidgets as w

from ctxlab.config._config import ContextConfig
from ctxlab.config._presets import PRESETS
from ctxlab.fork import ARRIVALS, Outcomes, fork, run_forward
from ctxlab.sources import ReplaySession
from ctxlab.widgets._fork_lab import ForkLab

if TYPE_CHECKING:
    from ctxlab.widgets._lab import Lab

__all__ = ["ForkPanel"]

ORIGINAL = "original"
"""The config in force (the Config tab's): the control."""
_RUN_KEYS = (
    "check",
    "check_timeout",
    "max_steps",
    "concurrency",
    "reference",
    "price",
    "rules",
    "prompt",
)
"""Options that go to `run_forward`; every other one goes to `fork`."""


class ForkPanel:
    """The Fork tab of ``lab`` (see the module)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.options: dict[str, Any] = {}
        """Keyword arguments for `fork` and `run_forward` the tab cannot ask for: ``workspace``,
        ``redo``, ``model``, ``tools``, ``check``, ``max_steps``, ``root``, ..."""
        self.configs = w.SelectMultiple(
            options=[ORIGINAL, *PRESETS],
            value=[ORIGINAL],
            rows=5,
            description="configs",
        )
        self.arrival = w.ToggleButtons(
            options=[(label, key) for key, label in ARRIVALS.items()], value="as_it_was"
        )
        self.runs = w.BoundedIntText(value=1, min=1, max=20, description="runs")
        self.button = w.Button(description="Fork here", button_style="warning", icon="code-fork")
        self.status = w.HTML()
        self.view = w.VBox()
        """Where the `ForkLab` of the last fork opens."""
        self.result: ForkLab | None = None
        self.task: asyncio.Task[Any] | None = None
        self._forks = 0  # each fork's branches in a folder of their own: their names stay
        self._made: Path | None = None
        self.button.on_click(lambda _: self.start())
        self.widget = w.VBox(
            [
                w.HTML(
                    "Fork the session at the selected request under each config picked, run "
                    "every branch forward, and compare: does the agent still finish?"
                ),
                w.HBox([self.configs, w.VBox([self.arrival, self.runs, self.button])]),
                self.status,
                self.view,
            ]
        )

    def sync(self) -> None:
        """Name the selected request on the button."""
        step = self.lab.selected
        self.button.description = "Fork here" if step is None else f"Fork at request {step}"

    def start(self) -> asyncio.Task[Any] | None:
        """Fork and run in the background (what the button does); its task."""
        if self.task is not None and not self.task.done():
            self._say("A fork is running; wait for it.", error=True)
            return None
        self.button.disabled = True  # at once: the click must not be repeatable
        self.task = asyncio.ensure_future(self.run(raise_errors=False))
        return self.task

    async def run(
        self,
        *,
        at: int | None = None,
        configs: dict[str, ContextConfig | str | None] | None = None,
        runs: int | None = None,
        raise_errors: bool = True,
    ) -> ForkLab | None:
        """Fork at ``at`` (the selected request) under ``configs`` (name → config; the ones
        picked), run each ``runs`` times, and show the result. A failure is shown in the
        status line and raised (``raise_errors=False``, the button's way, returns None)."""
        lab = self.lab
        step = lab.selected if at is None else at
        chosen = configs or {n: self._config(n) for n in self.configs.value}
        try:
            if step is None:
                msg = "select a request first (click the plot), then fork there"
                raise ValueError(msg)
            self.button.disabled = True
            self._say(f"forking at request {step} under {', '.join(chosen)} …")
            replays = lab.agent.capabilities.replays  # a recording: forked from its file's data
            origin = cast(ReplaySession, lab.agent).transcript if replays else lab.agent
            forking = {k: v for k, v in self.options.items() if k not in _RUN_KEYS}
            self._forks += 1
            forking["root"] = self._root() / f"fork-{self._forks}"
            running = {k: v for k, v in self.options.items() if k in _RUN_KEYS}
            branches = [
                await fork(
                    cast(Any, origin),
                    at=step,
                    config=config,
                    name=name,
                    arrival=self.arrival.value,
                    **forking,
                )
                for name, config in chosen.items()
            ]
            count = runs or self.runs.value
            self._say(f"running {len(branches)} branches × {count} …")
            outcomes = await run_forward(branches, runs=count, **running)
        except Exception as exc:
            self._say(f"{type(exc).__name__}: {exc}", error=True)
            if raise_errors:
                raise
            return None
        finally:
            self.button.disabled = False
        self.result = ForkLab(outcomes, original=lab.log.manifests)
        self.view.children = [self.result.widget]
        self._say(_done(outcomes, checked="check" in running))
        return self.result

    def _root(self) -> Path:
        root = self.options.get("root")
        if root is not None:
            return Path(root)
        if self._made is None:
            # The Lab's own folder for the forks made without a root=, removed when Python ends.
            self._made = Path(tempfile.mkdtemp(prefix="ctxlab-lab-forks-"))
            atexit.register(shutil.rmtree, self._made, ignore_errors=True)
        return self._made

    def _config(self, name: str) -> ContextConfig | str | None:
        if name == ORIGINAL:
            return self.lab.agent.context_config
        return name

    def _say(self, text: str, *, error: bool = False) -> None:
        style = " style='color:#c00'" if error else ""
        self.status.value = f"<span{style}>{html.escape(text)}</span>"


def _done(outcomes: Outcomes, *, checked: bool) -> str:
    """The status line after a fork: each branch's passes among the runs with a verdict and
    the interval of its pass rate — or, without a check, that no run has a verdict."""
    if not checked:
        return (
            "done: no check was set (lab.forks.options['check']), so no run has a verdict "
            "and there is no pass rate"
        )
    level = f"{outcomes.confidence:.0%}"
    said = []
    for row in outcomes.summary().to_dict("records"):
        share = f"{row['branch']} {row['passed']}/{row['verdicts']}"
        if row["verdicts"] < row["runs"]:
            share += f" of {row['runs']} runs with a verdict"
        if row["verdicts"]:
            share += f" ({level}: {row['pass_low']:.2f}–{row['pass_high']:.2f})"
        said.append(share)
    return f"done: passed the check — {', '.join(said)}"
