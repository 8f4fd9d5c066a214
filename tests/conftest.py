"""Shared fixtures: counters, a corpus locator that skips with a reason when it is absent."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, TiktokenCounter
from ctxlab.io._transcript import corpus_dir


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
