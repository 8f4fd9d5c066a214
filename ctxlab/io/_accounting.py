"""A load's census set against its file's inventory: what the file holds (a walk that knows no
format, `ctxlab.io._inventory`) beside what the reader placed and set aside (its census) — the
difference is *unaccounted*, by kind and JSON path, in ``meta["census"]``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ctxlab.io._census import Census
from ctxlab.io._inventory import inventory_of, unplaced
from ctxlab.io._transcript import Transcript
from ctxlab.messages import TextBlock, dump_messages

__all__ = ["account_for"]


def account_for(transcript: Transcript, values: Iterable[Any] | None) -> Transcript:
    """``transcript`` with its census set against the inventory of ``values`` (the file's
    decoded records; None when the file is not JSON: then no inventory is taken)."""
    census = Census.from_meta(transcript.meta.get("census"))
    if census is None or values is None:
        return transcript
    held = inventory_of(values)
    placed = inventory_of(dump_messages(transcript.messages))
    accounted = {"usage": census.usage_read, "reply": census.replies}
    words = "\n".join(
        " ".join(block.text.split())
        for message in transcript.messages
        for block in message.content
        if isinstance(block, TextBlock)
    )
    data = census.as_meta()
    data["held"] = held.counts()
    found = unplaced(held, placed, census.aside_keys, accounted, words)
    data["unaccounted"] = {**census.unaccounted, **found}
    meta = {**transcript.meta, "census": data}
    if held.cut:
        meta["inventory_cut"] = "part of the file is nested too deeply to walk: not counted"
    return replace(transcript, meta=meta)
