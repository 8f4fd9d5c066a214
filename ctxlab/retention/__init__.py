"""Retention: what an agent still has after its history is compacted, measured on the original
messages by an extractor no summarizer uses (see `ctxlab.retention._extract` for what each
category counts), split into what the summary keeps and what the kept tail keeps — and the
control, the tail alone. `next_use` grades a compaction by what the recorded agent used next
(``ctxlab.retention._next_use``).

>>> r = measure_retention(span, summary.text, tail)      # doctest: +SKIP
>>> r.share(), r.control_share(), r["commands"].lost      # doctest: +SKIP
"""

from ctxlab.retention._extract import CATEGORIES, TARGETS, FileAction, Inventory, inventory
from ctxlab.retention._measure import (
    CategoryRetention,
    Retention,
    compaction_retention,
    holds,
    measure_retention,
    request_text,
    retention_columns,
)
from ctxlab.retention._next_use import NextUse, UsedItem, next_use, used_items
from ctxlab.retention._users import UserLines

__all__ = [
    "CATEGORIES",
    "TARGETS",
    "CategoryRetention",
    "FileAction",
    "Inventory",
    "NextUse",
    "Retention",
    "UsedItem",
    "UserLines",
    "compaction_retention",
    "holds",
    "inventory",
    "measure_retention",
    "next_use",
    "request_text",
    "retention_columns",
    "used_items",
]
