"""The runs a what-if has replayed, kept by the config they replayed, and runs computed ahead.

A slider moves in steps, back and forth: most values it is moved to were shown a moment ago, or
lie one step from the value shown. A replay is a deterministic function of the session, the
window, the token counts, the unrecorded part and the config (`ctxlab.analysis._config_run`),
and a what-if fixes all but the config: so a run replayed once under a config *is* the run a
replay from the start under that config makes, and a move back to it takes it as it is — its
steps, and its retention and costs once graded and priced. Runs are kept by their config's
every field (its JSON), never by a step number or a slider's position.

`KeptRuns` holds the most recent ones (a run holds every request it prepared: a bound keeps a
long session's what-if from holding every value a slider ever passed); `WhatIf.ahead` fills it
in the background with the values a slider may be moved to next. Below a run, it keeps the
offline summaries every replay wrote (`SummaryMemo`): a compaction asked again with the same span
and fields by another config or move is not summarized again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ctxlab.analysis._summary_memo import SummaryMemo
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    from ctxlab.analysis._config_run import ConfigRun

__all__ = ["KEPT_RUNS", "KeptRuns", "Pace", "give_way"]

Pace = Callable[[], Awaitable[None]]
"""Awaited by a replay after each request (`replay_run`'s ``pace``)."""

KEPT_RUNS = 16
"""How many runs a what-if keeps besides the ones it shows (the slider's recent values and
their neighbours, for a few configs)."""


class KeptRuns:
    """Runs by (config name, every field of the config), the least recently used dropped past
    ``limit``."""

    def __init__(self, limit: int = KEPT_RUNS) -> None:
        self.limit = limit
        self._runs: OrderedDict[tuple[str, str], ConfigRun] = OrderedDict()
        self.taken = 0
        """How many times a kept run was taken instead of replayed."""
        self.summaries: SummaryMemo | None = SummaryMemo()
        """ctxlab's offline summaries by what they summarize (None: each replay writes its
        own, as a replay from the start does)."""

    @staticmethod
    def key(name: str, config: ContextConfig) -> tuple[str, str]:
        """What a run is kept by: its name and its config's every field."""
        if not isinstance(config, ContextConfig):
            msg = f"a kept run is found by its ContextConfig (the config replayed), got {shown(config)}"
            raise UsageError(msg)
        return name, config.model_dump_json()

    def get(self, name: str, config: ContextConfig) -> ConfigRun | None:
        """The kept run of ``config`` under ``name`` (None when there is none)."""
        key = self.key(name, config)
        run = self._runs.get(key)
        if run is not None:
            self._runs.move_to_end(key)
        return run

    def keep(self, run: ConfigRun) -> None:
        """Keep ``run`` (a replay that ran to its end or stopped on an error: both are what a
        replay from the start gives)."""
        key = self.key(run.name, run.config)
        self._runs[key] = run
        self._runs.move_to_end(key)
        while len(self._runs) > self.limit:
            self._runs.popitem(last=False)

    async def ahead(
        self, run: ConfigRun, replay: Callable[[ConfigRun, Pace], Awaitable[None]]
    ) -> ConfigRun:
        """The kept run of ``run``'s name and config, or ``run`` filled by ``replay`` — which
        gives the event loop back after each request (`give_way`), where a cancel stops it
        (nothing is kept then) — and kept."""
        kept = self.get(run.name, run.config)
        if kept is not None:
            return kept
        await replay(run, give_way)
        self.keep(run)
        return run

    def __len__(self) -> int:
        return len(self._runs)


async def give_way() -> None:
    """Let the event loop run what is waiting (a user's move) before the next request."""
    await asyncio.sleep(0)
