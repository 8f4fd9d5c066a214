"""The contract every public entry point keeps on any input, checked by the fuzz harness: it
returns, or raises one of ctxlab's documented errors with a message (never an error of Python's
own); it takes bounded time and memory; and it writes nothing but where the caller said.

`EXAMPLES` is how many inputs each fuzz test draws: a few dozen in the unit suite (CI stays
short), many more under ``make fuzz`` (``CTXLAB_FUZZ_EXAMPLES``, see docs/contributing.md)."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from ctxlab.exceptions import CtxlabError
from tests.hostile import listing

EXAMPLES = int(os.environ.get("CTXLAB_FUZZ_EXAMPLES", "25"))
"""Inputs per fuzz test: 25 in the unit suite, ``make fuzz`` sets thousands."""

AT_LENGTH = "CTXLAB_FUZZ_EXAMPLES" in os.environ
"""Whether the harness runs at length (``make fuzz``), not as the unit suite's share."""

at_length = pytest.mark.skipif(
    not AT_LENGTH, reason="the long form of the fuzz harness: run it with `make fuzz`"
)
"""Marks a test of the harness's long form (minutes: the corpus, every window)."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # the contract's own time bound, generous for a busy machine
    # No example database: the seeds are the fixtures, which change with the code, so an input
    # stored by an earlier run replays as "inconsistent data generation", not as a finding. A
    # failure prints its input (and `make fuzz` runs thousands fresh each time).
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

SECONDS = 20.0
"""The longest one call may take (inputs are kilobytes: seconds mean a hang)."""
MEGABYTES = 200
"""The most memory one call may allocate at once (tracemalloc's peak)."""


def holds(
    call: Callable[[], Any],
    *,
    watched: Iterable[Path] = (),
    shallow: Iterable[Path] = (Path.cwd(),),
    may_write: Iterable[Path] = (),
    seconds: float = SECONDS,
    megabytes: float = MEGABYTES,
    errors: tuple[type[BaseException], ...] = (CtxlabError,),
) -> Any:
    """Run ``call`` under the contract: its result, or None when it raised one of ``errors``
    (with a message). Fails the test on any other exception, on time over ``seconds``, memory
    over ``megabytes``, any change in the ``watched`` folders outside ``may_write``, or a new
    name in the ``shallow`` ones (the working folder: their files are not read, only named)."""
    with _Bounds(watched, shallow, may_write, seconds, megabytes), _documented(errors):
        return call()
    return None  # it raised one of ``errors``


async def aholds(
    make: Callable[[], Awaitable[Any]],
    *,
    watched: Iterable[Path] = (),
    shallow: Iterable[Path] = (Path.cwd(),),
    may_write: Iterable[Path] = (),
    seconds: float = SECONDS,
    megabytes: float | None = MEGABYTES,
) -> CtxlabError | None:
    """`holds` for a coroutine, awaited on the running loop (where the Lab's widgets and tasks
    live): the documented error it raised, or None when it returned. ``megabytes`` None leaves
    memory unmeasured (tracemalloc makes a long call several times slower)."""
    with _Bounds(watched, shallow, may_write, seconds, megabytes), _documented() as raised:
        await make()
    return raised[0] if raised else None


@contextmanager
def _documented(
    errors: tuple[type[BaseException], ...] = (CtxlabError,),
) -> Iterator[list[Any]]:
    """Inside: one of ``errors`` (with a message) is kept in the list it gives and goes no
    further; any other exception fails the test."""
    raised: list[Any] = []
    try:
        yield raised
    except errors as exc:
        _said(exc)
        raised.append(exc)
    except Exception as exc:
        raise AssertionError(f"not a documented error: {type(exc).__name__}: {exc}") from exc


class _Bounds:
    """The contract's checks around one call: time, memory, and what it wrote."""

    def __init__(
        self,
        watched: Iterable[Path],
        shallow: Iterable[Path],
        may_write: Iterable[Path],
        seconds: float,
        megabytes: float | None,
    ) -> None:
        self.folders = [Path(f) for f in watched]
        self.allowed = [Path(p) for p in may_write]
        self.shallow = list(shallow)
        self.seconds, self.megabytes = seconds, megabytes

    def __enter__(self) -> _Bounds:
        self.before = {f: listing(f) for f in self.folders}
        self.names = {f: sorted(p.name for p in f.iterdir()) for f in self.shallow}
        if self.megabytes is not None:
            tracemalloc.start()
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind: Any, value: Any, trace: Any) -> None:
        took = time.perf_counter() - self.started
        peak = 0
        if self.megabytes is not None:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        if kind is not None:
            return  # the call's own failure is the finding
        assert took < self.seconds, f"took {took:.1f} s"
        if self.megabytes is not None:
            assert peak < self.megabytes * 1e6, f"allocated {peak / 1e6:.0f} MB at once"
        for folder in self.folders:
            after = listing(folder)
            changed = {
                name
                for name in set(self.before[folder]) | set(after)
                if self.before[folder].get(name, b"-absent-") != after.get(name, b"-absent-")
            }
            outside = {
                name
                for name in changed
                if not any(_under(folder / name, path) for path in self.allowed)
            }
            assert not outside, f"written outside where it was told: {sorted(outside)[:5]}"
        for folder, known in self.names.items():
            added = set(p.name for p in folder.iterdir()) - set(known)
            assert not added, f"written in {folder}: {sorted(added)[:5]}"


def _said(exc: BaseException) -> None:
    assert str(exc).strip(), f"{type(exc).__name__} without a message"


def _under(path: Path, allowed: Path) -> bool:
    return path == allowed or allowed in path.parents
