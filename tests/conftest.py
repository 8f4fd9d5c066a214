"""Shared fixtures: counters, a corpus locator that skips with a reason when it is absent."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ctxlab import ApproximateCounter, TiktokenCounter
from ctxlab.io._transcript import corpus_dir

# Hypothesis's timing checks (an example over 200 ms, data drawn "too slowly") measure the
# machine, not the code: on two cores shared with other work they failed tests at random
# (test_the_shape_memo_never_says_no_to_what_is_usage, once, at load 7). A test that means to
# bound time says so itself (tests/fuzz/contract.py bounds each call).
# In CI, the examples are derived from each test (derandomize): a run gates a landing and says
# the same on the same code; a random search, run everywhere else, finds what it did not try.
settings.register_profile(
    "ctxlab",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=os.environ.get("CI") == "true",
)
settings.load_profile("ctxlab")


@pytest.fixture(scope="session")
def tiktoken_counter() -> TiktokenCounter:
    return TiktokenCounter()


@pytest.fixture
def approx_counter() -> ApproximateCounter:
    # A fresh counter per test gets a fresh shared cache.
    return ApproximateCounter()


def corpus_files() -> list[Path]:
    norm = corpus_dir() / "norm"
    return sorted(norm.glob("*.jsonl")) if norm.is_dir() else []


requires_corpus = pytest.mark.skipif(
    not corpus_files(),
    reason="transcript corpus not found: set CTXLAB_CORPUS to the folder holding norm/*.jsonl",
)


@pytest.fixture(autouse=True, scope="session")
def _sessions_kept_in_a_temporary_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """`sessions`' tables kept on disk (`ctxlab.io._sessions_disk`) go to a folder of the test
    run, not to the user's cache."""
    before = os.environ.get("CTXLAB_SESSIONS_CACHE")
    os.environ["CTXLAB_SESSIONS_CACHE"] = str(tmp_path_factory.mktemp("sessions-cache"))
    yield
    if before is None:
        del os.environ["CTXLAB_SESSIONS_CACHE"]
    else:
        os.environ["CTXLAB_SESSIONS_CACHE"] = before


@pytest.fixture(autouse=True)
def _collect_what_the_test_left() -> Iterator[None]:
    """Collect garbage at the end of every test: an object a test left unclosed (a socket, a
    file) warns while this test tears down and fails it, every run — not a later test, whenever
    the collector happens to run (``filterwarnings = error`` makes the warning an error).

    What survives is frozen (``gc.freeze``), so the next test's collection walks only what that
    test allocated: a full collection of the suite's heap at every test tripled its time."""
    yield
    gc.collect()
    gc.freeze()
