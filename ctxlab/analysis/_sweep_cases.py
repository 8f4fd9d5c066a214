"""What a `sweep` takes from its caller, checked: its sessions (loaded, each named apart: the
frame is keyed by name) and the cases it replays (the product of sessions, configs and windows,
or the explicit triples). Kept apart from `sweep` so that it stays about running the cases and
caching them; each check raises a `UsageError` that names what is wrong.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from ctxlab.util._checks import context_window, shown

__all__ = ["Case", "case_of", "sweep_sessions", "wanted_cases"]

Case = tuple[str, str, int]
"""A case of the sweep: (session name, config name, window)."""


def sweep_sessions(items: Any) -> list[Transcript]:
    """The sessions of ``items`` (Transcripts, paths, or the frame of `ctxlab.sessions`: its
    files that loaded), loaded, each named apart (``name#2`` for a second of one name)."""
    if hasattr(items, "columns") and "path" in items.columns:  # a sessions() frame
        ok = items["problem"].isna() if "problem" in items.columns else [True] * len(items)
        items = [p for p, fine in zip(items["path"], ok, strict=True) if fine]
    if isinstance(items, str | bytes | os.PathLike) or not isinstance(items, Iterable):
        msg = (
            "transcripts must be a list of Transcripts or paths (or the frame of "
            f"ctxlab.sessions), got {shown(items)}"
        )
        raise UsageError(msg)
    out: list[Transcript] = []
    names: set[str] = set()
    for item in items:
        transcript = item if isinstance(item, Transcript) else load(item)
        name, number = transcript.name, 1
        while name in names:  # the frame is keyed by session name
            number += 1
            name = f"{transcript.name}#{number}"
        names.add(name)
        if name != transcript.name:
            # Every field kept (its clock and usage too): only the name differs.
            transcript = dataclasses.replace(transcript, name=name)
        out.append(transcript)
    return out


def wanted_cases(
    sessions: Mapping[str, Transcript],
    configs: Mapping[str, ContextConfig],
    windows: Sequence[int],
    cases: Iterable[Case] | None,
) -> list[Case]:
    """The cases to run, in the frame's order: the product, or the explicit ones (checked)."""
    if not configs or not sessions:
        msg = "sweep needs at least one session and one named config"
        raise UsageError(msg)
    if cases is not None and (isinstance(cases, str | bytes) or not isinstance(cases, Iterable)):
        msg = f"cases must be a list of (session, config, window) triples, got {shown(cases)}"
        raise UsageError(msg)
    wanted = (
        [case_of(c) for c in cases]
        if cases is not None
        else [(s, c, w) for s in sessions for c in configs for w in windows]
    )
    unknown = [c for c in wanted if c[0] not in sessions or c[1] not in configs]
    if unknown:
        msg = f"cases name unknown sessions or configs: {unknown[:3]}"
        raise UsageError(msg)
    return wanted


def case_of(value: Any) -> Case:
    """``value`` as a case: a (session name, config name, window) triple, the window checked."""
    if not isinstance(value, tuple | list) or len(value) != 3:
        msg = f"each case is a (session name, config name, window) triple, got {shown(value)}"
        raise UsageError(msg)
    session, config, window = value
    return str(session), str(config), context_window(window, "a case's window")
