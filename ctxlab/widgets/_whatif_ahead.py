"""The what-if lab's configs replayed ahead: while the user reads, the values a slider may be
moved to next (one step either way, then two on the trigger) are replayed in the background,
each giving the event loop back after every request (`WhatIf.ahead`), so that the move to one
of them takes its run as it is (`ctxlab.analysis._whatif_kept`) instead of replaying.

A move stops what is computed ahead, except the config it asks for when that one is being
replayed: it finishes there. Nothing is run ahead with a summarizer model (its calls are paid).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._whatif_kept import KeptRuns
from ctxlab.config._config import ContextConfig

if TYPE_CHECKING:
    from ctxlab.analysis._config_run import ConfigRun
    from ctxlab.analysis._whatif import WhatIf

__all__ = [
    "SLIDERS",
    "Ahead",
    "computing_status",
    "moved_status",
    "nearby",
    "neighbours",
    "slider_value",
]

SLIDERS = {
    "trigger_ratio": (0.1, 0.9, 0.05),
    "reserve_ratio": (0.02, 0.5, 0.01),
}
"""The what-if lab's sliders: field → (lowest, highest, step)."""

NEAREST = 2
"""How many configs of `_NEXT` are replayed before a move's retention and cost are filled in:
one trigger step either way. Each takes about a move's replay; the filling (the grader's and
the pricer's work) takes many times that, and a user reading the lines moves again soonest."""

_NEXT = (
    ("trigger_ratio", 1),
    ("trigger_ratio", -1),
    ("reserve_ratio", 1),
    ("reserve_ratio", -1),
    ("trigger_ratio", 2),
    ("trigger_ratio", -2),
)
"""The moves a user is likely to make next, most likely first: a step either way (the trigger,
which users move most, first), then two trigger steps."""


def slider_value(value: float) -> float:
    """A slider's value without the float noise of its steps (0.1 + 11 × 0.05 is
    0.6500000000000001): the configs a move asks for and those computed ahead meet."""
    return round(value, 10)


def nearby(
    config: ContextConfig, moves: Sequence[tuple[str, float, float, float]]
) -> list[ContextConfig]:
    """``config`` with one field moved by each (field, change, lowest, highest) of ``moves``,
    in order: the valid ones within the slider's range, each once."""
    out: list[ContextConfig] = []
    for name, change, low, high in moves:
        value = slider_value(getattr(config, name) + change)
        if not low <= value <= high:
            continue
        try:
            moved = ContextConfig.model_validate({**config.model_dump(), name: value})
        except ValueError:
            continue  # e.g. a trigger at or below the buffer ratio: no slider can show it
        if moved not in out and moved != config:
            out.append(moved)
    return out


def neighbours(config: ContextConfig) -> list[ContextConfig]:
    """The configs the sliders reach from ``config`` in the moves of `_NEXT`, in its order."""
    return nearby(
        config,
        [(f, n * SLIDERS[f][2], SLIDERS[f][0], SLIDERS[f][1]) for f, n in _NEXT],
    )


def computing_status(name: str, values: dict[str, float]) -> str:
    """The status line the moment a slider moves, before any replay: what is computed."""
    fields = ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in values.items())
    return f"{name}: computing {fields} …"


def moved_status(run: ConfigRun, *, kept: bool) -> str:
    """The status line after a move: how the run shown was made (``kept``: taken as replayed
    before or ahead, no replay)."""
    if kept:
        return f"{run.name}: {len(run.prepared)} requests, as replayed before (no replay)"
    reused = f" ({run.reused} reused)" if run.reused else ""
    seconds = f"{run.seconds * 1000:.0f} ms"
    return f"{run.name}: replayed {len(run.prepared)} requests{reused} in {seconds}"


class Ahead:
    """Replays configs of one what-if in the background, one after the other."""

    def __init__(self, what: WhatIf) -> None:
        self.what = what
        self.task: asyncio.Task[None] | None = None
        """The background replays (None before the first move)."""
        self.computed = 0
        """How many configs were replayed ahead."""
        self.enabled = True
        """False: nothing is replayed ahead (every move replays)."""
        self._doing: tuple[tuple[str, str], asyncio.Task[Any]] | None = None
        self._last = False
        self._nearest = asyncio.Event()
        self._nearest.set()  # nothing to wait for before a start

    def read(self, name: str) -> None:
        """Replay the neighbouring slider values of config ``name`` in the background (only
        where an event loop runs: a lab built outside one computes nothing ahead)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.enabled:
            self.start(name, neighbours(self.what.runs[name].config))
        else:
            self.stop()

    def start(self, name: str, configs: Sequence[ContextConfig]) -> None:
        """Stop what runs ahead now and replay ``configs`` under ``name`` (those not kept)."""
        self.stop()
        self._last = False
        self._nearest = asyncio.Event()
        self.task = asyncio.ensure_future(self._run(name, list(configs), self._nearest))

    def stop(self) -> None:
        """Cancel the background replays (a replay cancelled is not kept)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.task = None
        self._nearest.set()

    async def nearest(self) -> None:
        """Wait until the `NEAREST` configs are replayed (or the replays stopped)."""
        await self._nearest.wait()

    async def finish(self, name: str, config: ContextConfig) -> None:
        """A move to ``config``: when it is being replayed ahead, let that replay finish (and
        nothing after it); otherwise stop every background replay."""
        doing = self._doing
        if doing is None or doing[0] != KeptRuns.key(name, config):
            self.stop()
            return
        self._last = True
        with contextlib.suppress(asyncio.CancelledError):
            await doing[1]

    async def _run(self, name: str, configs: list[ContextConfig], nearest: asyncio.Event) -> None:
        # The event of this start (a cancelled run ends after the next start made its own).
        try:
            await self._replay(name, configs, nearest)
        finally:
            nearest.set()

    async def _replay(
        self, name: str, configs: list[ContextConfig], nearest: asyncio.Event
    ) -> None:
        for number, config in enumerate(configs):
            if number == NEAREST:
                nearest.set()
            if self._last:
                return
            if self.what.kept_run(name, config) is not None:
                continue
            job = asyncio.ensure_future(self.what.ahead(name, config))
            self._doing = KeptRuns.key(name, config), job
            try:
                # A cancel of this task cancels the replay it waits for (nothing kept).
                if await job is not None:
                    self.computed += 1
            finally:
                # Only its own: a cancelled run ends after the next start set its replay.
                if self._doing is not None and self._doing[1] is job:
                    self._doing = None
