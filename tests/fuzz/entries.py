"""What a user runs on a session `load` accepted, driven one entry point at a time: the Lab in
both views (its snapshot, its report, the switch of views), the what-if lab (three presets, a
slider's move, the comparison table), `replay`, and a fork of the recording at a few steps run
forward once by the offline model. Each returns, or raises one of ctxlab's documented errors
with a message — never an error of Python's own (see `tests.fuzz.contract`); a run forward that
fails keeps its error in its row, which must name a documented error too.

`drive` runs every entry point on one transcript; `ENTRIES` names them, so a test can draw one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import ctxlab.exceptions as exceptions
from ctxlab import ContextConfig, Transcript, replay
from ctxlab.analysis import recorded_requests
from ctxlab.exceptions import CtxlabError
from ctxlab.fork import fork, run_forward
from ctxlab.io._transcript import corpus_dir
from ctxlab.models import MemorylessModel
from ctxlab.tokens import ApproximateCounter
from tests.fuzz.contract import MEGABYTES, SECONDS, aholds

ENTRIES = ("lab_recorded", "lab_replayed", "whatif", "replay", "fork")
"""The entry points `drive` runs, by name."""

WINDOWS = (2_000, 32_000, 200_000)
"""Windows to open a session at: one that compacts nearly every request (or leaves no room), one
that compacts a long session, one that holds most."""


def _documented(name: str) -> bool:
    # Whether an error's type name (a run's row keeps ``"Type: message"``) is one of ctxlab's.
    kind = getattr(exceptions, name, None)
    return isinstance(kind, type) and issubclass(kind, CtxlabError)


def _config(preset: str | None) -> ContextConfig:
    return ContextConfig.preset(preset) if preset else ContextConfig()


async def _lab(
    source: Path | Transcript, folder: Path, window: int, view: str, preset: str | None
) -> None:
    # The widgets are an extra: imported when a Lab is driven (the tests skip without them).
    from ctxlab.widgets import Lab

    lab = await Lab.open(source, context_window=window, config=_config(preset), view=view)  # type: ignore[arg-type]
    try:
        lab.snapshot_html()
        lab.steps  # noqa: B018 - the step table is built on read
        page = lab.report(folder / "report.html").read_text()
        assert "<script" not in page.lower()
        switched = lab.show_view("replayed" if view == "recorded" else "recorded")
        if switched is not None:
            await switched
        lab.snapshot_html()
    finally:
        lab.close()


async def _whatif(transcript: Transcript, window: int, preset: str | None) -> None:
    from ctxlab.widgets import WhatIfLab  # (an extra, as in `_lab`)

    # Without a preset, the what-if's own three; with one, it beside the defaults.
    configs = {preset: _config(preset), "defaults": ContextConfig()} if preset else None
    lab = await WhatIfLab.open(
        transcript, configs, context_window=window, counter=ApproximateCounter()
    )
    name = next(iter(lab.what.runs))
    await lab.tune(name, trigger_ratio=0.5, reserve_ratio=0.1)
    lab.what.table()
    lab.what.headline()
    lab._repr_mimebundle_()


async def _replay(transcript: Transcript, window: int, preset: str | None) -> None:
    async for step in replay(
        transcript.messages,
        context_window=window,
        counter=ApproximateCounter(),
        config=_config(preset),
        system=transcript.system,
        tools=transcript.tools,
    ):
        step.manifest.items_frame()


def fork_steps(transcript: Transcript) -> list[int]:
    """The steps a recording is forked at: its first request, one in the middle, its end."""
    count = len(recorded_requests(transcript))
    return sorted({0, count // 2, count})


async def _fork(transcript: Transcript, folder: Path, window: int, preset: str | None) -> None:
    branches = []
    for number, at in enumerate(fork_steps(transcript)):
        arrival = "as_it_was" if number % 2 == 0 else "from_start"
        try:
            branches.append(
                await fork(
                    transcript,
                    at=at,
                    config=preset,
                    name=f"at-{at}",
                    arrival=arrival,  # type: ignore[arg-type]
                    model=MemorylessModel(context_window=window),
                    root=folder / "forks",
                )
            )
        except CtxlabError as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message"
    if not branches:
        return
    outcomes = await run_forward(branches, prompt="Go on.", max_steps=3)
    for run in outcomes.runs:
        said = run.error or ""
        assert not said or _documented(said.split(":", 1)[0]), f"a run forward failed: {said}"


def entry(
    name: str,
    transcript: Transcript,
    folder: Path,
    window: int,
    path: Path | None = None,
    preset: str | None = None,
) -> Callable[[], Awaitable[None]]:
    """The call of entry point ``name`` on ``transcript`` (the Lab opens ``path`` when given,
    as a user does) under the config ``preset`` names (the defaults when None), writing only
    under ``folder``."""
    calls: dict[str, Callable[[], Awaitable[None]]] = {
        "lab_recorded": lambda: _lab(path or transcript, folder, window, "recorded", preset),
        "lab_replayed": lambda: _lab(path or transcript, folder, window, "replayed", preset),
        "whatif": lambda: _whatif(transcript, window, preset),
        "replay": lambda: _replay(transcript, window, preset),
        "fork": lambda: _fork(transcript, folder, window, preset),
    }
    return calls[name]


async def drive(
    transcript: Transcript,
    folder: Path,
    *,
    window: int,
    path: Path | None = None,
    entries: tuple[str, ...] = ENTRIES,
    preset: str | None = None,
    seconds: float = SECONDS,
    megabytes: float | None = MEGABYTES,
) -> dict[str, str]:
    """Run each of ``entries`` on ``transcript`` under the contract (``seconds`` and
    ``megabytes`` each; None leaves memory unmeasured); each one's outcome: ``ok`` or the
    documented error's type. Fails on any other error, naming the entry point and the input."""
    outcomes: dict[str, str] = {}
    watched = [path.parent] if path is not None else []
    for name in entries:
        out = folder / name
        out.mkdir(parents=True, exist_ok=True)
        try:
            raised = await aholds(
                entry(name, transcript, out, window, path, preset),
                watched=[*watched, out],
                may_write=[out],
                seconds=seconds,
                megabytes=megabytes,
            )
        except AssertionError as exc:
            raise AssertionError(
                f"{name} on {transcript.name!r} at {window} under {preset or 'the defaults'}: {exc}"
            ) from exc
        outcomes[name] = "ok" if raised is None else type(raised).__name__
    return outcomes


def corpus_sessions() -> list[Path]:
    """The real sessions of the corpus (``CTXLAB_CORPUS``), raw files as their tools wrote them
    and normalized ones; none when it is absent."""
    root = corpus_dir()
    found = sorted((root / "norm").glob("*.jsonl")) if (root / "norm").is_dir() else []
    raw = root / "raw"
    if raw.is_dir():
        found += sorted(
            p
            for p in raw.rglob("*")
            if p.is_file() and p.suffix in (".jsonl", ".json", ".traj") and "LICENSE" not in p.name
        )
    return found
