"""What a user hands an entry point for a recorded session (`Lab.open`, `WhatIfLab.open`,
`fork`): a `Transcript`, a path `load` reads, or a row of `ctxlab.sessions` — each read the same
way by every entry point, and anything else refused naming what is taken."""

from __future__ import annotations

import os
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.io._load import load
from ctxlab.io._transcript import Transcript

__all__ = ["SessionSource", "transcript_of"]

SessionSource = Transcript | str | os.PathLike[str] | Any
"""What an entry point takes for a recorded session: a `Transcript`, a path, a sessions row."""


def _episode(value: Any) -> int:
    # A row's episode: a whole number (numpy's too), else the main thread (a gap in the frame).
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def transcript_of(value: Any, *, taker: str = "this entry point") -> Transcript:
    """A `Transcript` as it is, else loaded: from a path, or from a row of `ctxlab.sessions`
    (its ``path``, and its ``episode`` for a subagent held in its session's file). ``taker``
    names the entry point in the error for anything else."""
    if isinstance(value, Transcript):
        return value
    if isinstance(value, str | os.PathLike):
        return load(value)
    keys = getattr(value, "keys", None)
    if callable(keys) and "path" in keys():
        episode = _episode(value["episode"] if "episode" in keys() else 0)
        return load(value["path"], episode=episode)
    msg = (
        f"{taker} needs a Transcript, a path or a row of ctxlab.sessions(), "
        f"got {type(value).__name__}"
    )
    raise UsageError(msg)
