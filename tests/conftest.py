"""Shared fixtures: counters, a corpus locator that skips with a reason when it is absent."""

from __future__ import annotations

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
