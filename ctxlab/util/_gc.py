"""Python's cyclic garbage collector held off while a replay builds its steps.

A what-if keeps every step of every config: hundreds of thousands of long-lived objects (items,
manifests, states). While a replay allocates, the collector runs again and again over all of
them and finds almost nothing to free (what a replay drops is freed by reference counting): on a
5,000-request what-if it was a third of a slider move. Held off for the replay, the objects the
replay kept are examined once, when it is done, instead of at every collection it would trigger.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (a no-op when it is already off: a caller
    holding it off, or the user), then enable it again, whatever the block raised."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
