"""The contract every public entry point keeps on any input, checked by the fuzz harness: it
returns, or raises one of ctxlab's documented errors with a message (never an error of Python's
own); it takes bounded time and memory; and it writes nothing but where the caller said.

`EXAMPLES` is how many inputs each fuzz test draws: a few dozen in the unit suite (CI stays
short), many more under ``make fuzz`` (``CTXLAB_FUZZ_EXAMPLES``, see docs/contributing.md)."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from ctxlab.exceptions import CtxlabError
from tests.hostile import listing

EXAMPLES = int(os.environ.get("CTXLAB_FUZZ_EXAMPLES", "25"))
"""Inputs per fuzz test: 25 in the unit suite, ``make fuzz`` sets thousands."""

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
    folders = [Path(f) for f in watched]
    allowed = [Path(p) for p in may_write]
    before = {f: listing(f) for f in folders}
    names = {f: sorted(p.name for p in f.iterdir()) for f in shallow}
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = call()
    except errors as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        result = None
    except Exception as exc:
        raise AssertionError(f"not a documented error: {type(exc).__name__}: {exc}") from exc
    finally:
        took = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert took < seconds, f"took {took:.1f} s"
    assert peak < megabytes * 1e6, f"allocated {peak / 1e6:.0f} MB at once"
    for folder in folders:
        after = listing(folder)
        changed = {
            name
            for name in set(before[folder]) | set(after)
            if before[folder].get(name, b"-absent-") != after.get(name, b"-absent-")
        }
        outside = {
            name for name in changed if not any(_under(folder / name, path) for path in allowed)
        }
        assert not outside, f"written outside where it was told: {sorted(outside)[:5]}"
    for folder, known in names.items():
        added = set(p.name for p in folder.iterdir()) - set(known)
        assert not added, f"written in {folder}: {sorted(added)[:5]}"
    return result


def _under(path: Path, allowed: Path) -> bool:
    return path == allowed or allowed in path.parents
