"""Which price a model is billed at: `price_for` (and the table it reads, `PRICES`), the day a
recording was made (`recorded_on`, for a price that changed since).

A model the table does not know is *unpriced*: `price_for` gives `Price.unknown(model)`, whose
figures are NaN, so that every cost computed from it — and every sum over such costs — is NaN,
never another model's dollars. A name is matched as providers and harnesses write it: a provider
prefix (``anthropic/``, ``google/``, ``litellm_proxy/…/``), Bedrock's and Vertex's forms
(``us.anthropic.…-v2:0``, ``…@20250929``), Claude Code's ``[1m]`` and dotted Claude versions
(``claude-sonnet-4.5``) are read as the model they name, and so is a snapshot suffix
(``-20250929``, ``-2024-08-06``, ``-0613``, ``-latest``); any other suffix (``-preview``,
``-thinking``, a version number: ``claude-opus-4-10``) is another model, unpriced until the table
knows it.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

from ctxlab.analysis._price import PROVIDERS, LongContext, Price, Provider, checked_price
from ctxlab.analysis._price_table import DATED, MIN_CACHED, PRICES
from ctxlab.io._transcript import models_of

__all__ = [
    "PRICES",
    "PROVIDERS",
    "LongContext",
    "Price",
    "Provider",
    "checked_price",
    "min_cached_tokens",
    "model_key",
    "price_for",
    "recorded_model",
    "recorded_on",
]


def price_for(model: str, on: date | None = None) -> Price:
    """The price ``model`` is billed at: the table's entry for the name it is (see the module),
    as in force on ``on`` (a recording's day, `recorded_on`; None: the table's current price);
    `Price.unknown` when the table does not know it — never another model's price."""
    key = _known_key(model)
    if key is None:
        return Price.unknown(model)
    changes = DATED.get(key)
    if on is None or not changes:
        return PRICES[key]
    if isinstance(on, datetime):  # a time is its day (a datetime cannot be compared to a date)
        on = on.date()
    price = changes[0][1]
    for since, later in changes:
        if since <= on:
            price = later
    return price


def _known_key(model: str) -> str | None:
    """The table's name for ``model``: the longest known name it is, plus a snapshot suffix."""
    if not isinstance(model, str):
        return None
    name = model_key(model)
    if name in PRICES:
        return name
    found = [k for k in PRICES if name.startswith(k) and is_snapshot_suffix(name[len(k) :])]
    return max(found, key=len) if found else None


def min_cached_tokens(model: str) -> int:
    """The shortest prefix ``model``'s provider caches (1,024 unless the table says)."""
    key = _known_key(model)
    return MIN_CACHED.get(key, 1024) if key is not None else 1024


def model_key(model: str) -> str:
    """``model`` as the table names it: the provider prefix, Bedrock's region and vendor,
    Vertex's ``@version`` and Claude Code's ``[1m]`` taken off, dotted Claude versions written
    with dashes, in lower case (the snapshot suffix is left for `price_for` to judge)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if "anthropic." in name:
        name = name.rsplit("anthropic.", 1)[-1]
    for mark in ("@", "["):
        name = name.split(mark, 1)[0]
    if name.startswith("claude"):
        name = _dashed(name)
    return name


def _dashed(name: str) -> str:
    """``claude-sonnet-4.5`` → ``claude-sonnet-4-5`` (a dot between digits only)."""
    chars = list(name)
    for n in range(1, len(chars) - 1):
        if chars[n] == "." and chars[n - 1].isdigit() and chars[n + 1].isdigit():
            chars[n] = "-"
    return "".join(chars)


_DATE_SHAPES = {(8,), (4,), (3,), (4, 2, 2), (2, 2)}
"""Digit groups a snapshot suffix is made of: ``20250929``, ``0613``, ``001``, ``2024-08-06``,
``05-06``."""


def is_snapshot_suffix(rest: str) -> bool:
    """Whether ``rest`` (what follows a known name) is empty or names a snapshot of that model:
    a date (``-20250929``, ``-2024-08-06``, ``-05-06``, ``-0613``, ``-001``), ``-latest``, or
    either followed by Bedrock's ``-v2:0``. A lone number (``-10``) is a version: another
    model."""
    if not rest:
        return True
    if not rest.startswith("-"):
        return False
    pieces = rest[1:].split("-")
    if len(pieces) > 1 and _bedrock_version(pieces[-1]):
        pieces.pop()
    if pieces == ["latest"]:
        return True
    if not all(p.isascii() and p.isdigit() for p in pieces):
        return False
    return tuple(map(len, pieces)) in _DATE_SHAPES


def _bedrock_version(piece: str) -> bool:
    """``v1``, ``v2:0``."""
    major, _, minor = piece.removeprefix("v").partition(":")
    whole = (major, minor) if minor else (major,)
    return piece.startswith("v") and all(p.isascii() and p.isdigit() for p in whole)


def recorded_model(meta: dict[str, Any]) -> str:
    """The model a recording's costs are priced as: the first its file names (empty: none)."""
    models = models_of(meta)
    return models[0] if models else ""


def recorded_on(meta: dict[str, Any]) -> date | None:
    """The day a recording started, where its file says (``startTime``, ``started``: an ISO
    date or time, or seconds or milliseconds since the epoch); None otherwise — the table's
    current prices are then used."""
    for key in ("startTime", "started", "started_at"):
        day = _day(meta.get(key))
        if day is not None:
            return day
    return None


def _day(value: Any) -> date | None:
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        seconds = value / 1000 if value > 1e11 else value  # milliseconds, as JavaScript writes
        try:
            return datetime.fromtimestamp(seconds, tz=UTC).date()
        except (OverflowError, OSError, ValueError):
            return None
    return None
