"""Each retention test scans its texts itself: the extractor's memos (kept across calls so a
what-if measures each text once) are emptied before every test. Without this, a test served a
scan an earlier test memoized checks nothing of the scan — and a mutation run, which forks after
the tests ran once, reports every change inside a memoized scan as surviving."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxlab.retention import _extract, _holds, _measure, _paths, _users


@pytest.fixture(autouse=True)
def _fresh_memos() -> Iterator[None]:
    memos = (
        _extract._memo,
        _paths._files,
        _users._memo,
        _measure._collapsed,
        _holds._item_words,
        _holds._part_words,
    )
    for memo in memos:
        memo._values.clear()
    yield
