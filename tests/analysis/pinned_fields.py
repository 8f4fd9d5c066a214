"""The fields of a `CompactionRecord` as the pinned digests saw them
(``test_prepared_digest.py``, ``test_replay_figures_pinned.py``): a field added after the pins
were taken counts only when it holds something — None in every pinned config — so the pins
stay valid and a value there still changes the digest. The next such field is one more name in
`ADDED_AFTER_PINS`."""

from __future__ import annotations

import dataclasses
from typing import Any

from ctxlab.pipeline import CompactionRecord

ADDED_AFTER_PINS = frozenset({"asked"})
"""Fields `CompactionRecord` gained after the pins were taken."""


def pinned_fields(
    record: CompactionRecord, without: frozenset[str] = frozenset()
) -> list[tuple[str, Any]]:
    """(name, value) of each field of ``record`` but ``without`` (never read: ``retention``
    would be graded), in order, those added after the pins only when not None."""
    found = []
    for field in dataclasses.fields(record):
        if field.name in without:
            continue
        value = getattr(record, field.name)
        if field.name not in ADDED_AFTER_PINS or value is not None:
            found.append((field.name, value))
    return found


def pinned_repr(record: CompactionRecord) -> str:
    """``repr(record)`` as it was when the pins were taken."""
    shown = ", ".join(f"{name}={value!r}" for name, value in pinned_fields(record))
    return f"{type(record).__qualname__}({shown})"
