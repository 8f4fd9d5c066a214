"""What the hostile-input tests of several packages share: a file or folder made read-only for
real (root ignores permission bits), a file's bytes and a folder's listing to compare before and
after, a check that a message names the problem and the fix, and a check that a reading
takes time linear in its text's length."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` (a file or a folder) read-only while the block runs — for root too, whom
    permission bits do not stop: then the file is made immutable (``chattr +i``), and the test
    is skipped with the reason where that is not possible."""
    if os.geteuid() != 0:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(mode & ~0o222)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    done = (
        subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False)
        if chattr
        else None
    )
    if done is None or done.returncode != 0:
        pytest.skip("root ignores permission bits and chattr +i is not available here")
    try:
        yield path
    finally:
        subprocess.run([str(chattr), "-i", str(path)], capture_output=True, check=True)


def listing(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder): what a test compares to
    show that nothing was written, moved or left behind."""
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
    }


def says(message: str, *parts: str) -> None:
    """``message`` holds every one of ``parts`` (case-insensitive): the problem and the fix."""
    lowered = message.lower()
    missing = [p for p in parts if p.lower() not in lowered]
    assert not missing, f"the message does not say {missing}: {message!r}"


def _seconds(run: Callable[[], object], first: float) -> float:
    # The least of three: a busy machine slows a run, never speeds one up.
    return min([first, _once(run), _once(run)])


def _once(run: Callable[[], object]) -> float:
    # Processor time, not the wall clock: on two cores shared with other work a run waits for a
    # core (CI failed a linear reading at load 13: 1.63 s of wall clock for ~0.1 s of work).
    started = time.process_time()
    run()
    return time.process_time() - started


def assert_linear(make: Callable[[int], Callable[[], object]], n: int, bound: float) -> None:
    """``make(n)`` and ``make(4 * n)`` take about four times as long, and ``make(4 * n)`` less
    than ``bound`` seconds. A quadratic text fails at ``n`` already, before the long one (which
    could take hours) is tried."""
    short_run, long_run = make(n), make(4 * n)
    first = _once(short_run)
    assert first < bound / 4, f"{n:,}: {first:.2f} s"
    short = _seconds(short_run, first)
    long = _seconds(long_run, _once(long_run))
    assert long < bound, f"{4 * n:,}: {long:.2f} s"
    assert long < 8 * short + 0.25, f"{n:,}: {short:.3f} s, {4 * n:,}: {long:.3f} s"


FAILING_RUNS = [
    ("", "1", "x"),
    ("", "1", "é"),
    ("", "1", ".x"),
    ("", "1.", "x"),
    ("v", "1.", "_"),
    ("", "12.", "a"),
    ("", "a_", "A"),
    ("", "Aa", "_"),
    ("", "a.", "1"),
]
"""(prefix, unit, end): texts ``prefix + unit * k + end`` — a run a pattern of numbers and
names reads whole, then a character that makes the match fail (issue 51: a pattern that gives
the run back one character at a time, reading the rest of it again each time, takes the square
of its length)."""
