"""Count stores the tests make: a SQLite file of another shape than ctxlab's, and what opening
it says."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctxlab.exceptions import CountStoreError
from ctxlab.tokens import CountStore


def refused(path: Path, *statements: str) -> str:
    """The message of the `CountStoreError` that opening ``path`` raises once ``statements``
    made it a database of another shape (none: the file as it is) — checking the file is left
    as it was."""
    if statements:
        with sqlite3.connect(path) as db:
            for statement in statements:
                db.execute(statement)
        db.close()
    before = path.read_bytes()
    with pytest.raises(CountStoreError) as caught:
        CountStore(path)
    assert path.read_bytes() == before
    return str(caught.value)
