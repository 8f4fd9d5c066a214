"""A pytest plugin for mutation runs (`tests/mutate.py` loads it): every `Memo` and
``functools`` cache is emptied when a test run starts.

mutmut runs each mutant's tests in a process forked from one whose tests already ran, so a
memo (`ctxlab.retention._paths.command_files`, the span scans) still holds the answers of the
unmutated code: the mutant behind it is never called, and survives. A mutant that made
``command_files`` raise on every call "survived" that way, while the same change fails
``tests/retention`` in a plain run; retention/_paths scored 25%."""

from __future__ import annotations

import functools
import gc

import pytest

from ctxlab.util._memo import Memo


def pytest_configure(config: pytest.Config) -> None:
    for found in gc.get_objects():
        if isinstance(found, Memo):
            found._values.clear()
        elif isinstance(found, functools._lru_cache_wrapper):
            found.cache_clear()
