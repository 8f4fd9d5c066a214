"""What `prepare` takes from its caller besides state and materials, and its former keywords.

`CallerInputs` groups what the calling agent contributes, `CompactionOrder` how one request
compacts; `grouped` folds the keywords `prepare` took before they were grouped into them, with a
`DeprecationWarning` each.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

from ctxlab.manifest import AskRule
from ctxlab.pipeline._budget import SelectionPolicy
from ctxlab.pipeline._stages import Projection

__all__ = ["CallerInputs", "CompactionOrder", "grouped"]


@dataclass(frozen=True)
class CallerInputs:
    """What the agent that calls `prepare` contributes besides its state and materials."""

    projection: Projection | None = None
    """The task-state material for the reduced conversation (never omitted)."""
    usage_notice: bool = True
    """False holds the usage notice back (the agent does while a todo item is in progress, as
    002 says for plan tasks)."""
    selection_policy: SelectionPolicy | None = None
    """Orders the omission of optional material (000's contextSelectionPolicy)."""


@dataclass(frozen=True)
class CompactionOrder:
    """How this one request compacts, against the config's defaults."""

    force: bool = False
    """Compact whatever the size (overflow recovery, "Compact now")."""
    threshold: int | None = None
    """Replaces the trigger line for this request (the CompressContext tool compacts from the
    usage-notice line)."""
    instructions: str | None = None
    """A hint for the summary ("keep every file path")."""
    keep_arrived: bool = False
    """Keep only what arrived since the last request (with the reply whose calls it answers),
    summarizing the rest: compaction on demand, where the application sends the conversation so
    far to be summarized and then the block and the new turn (not the reserve's tail)."""
    asked: AskRule | None = None
    """The on-demand rule that asked for this compaction (``task``, ``requests``, ``tokens``,
    ``idle``: `ctxlab.config.OnDemandCompaction`), kept on its record
    (`CompactionRecord.asked`) so that what it exports says it was asked for, and why."""


_LEGACY = {
    "projection": ("caller", "projection"),
    "usage_notice": ("caller", "usage_notice"),
    "selection_policy": ("caller", "selection_policy"),
    "force_compaction": ("compaction", "force"),
    "compaction_threshold": ("compaction", "threshold"),
    "instructions": ("compaction", "instructions"),
    "call_id": ("", "request_id"),
}
"""`prepare`'s keyword arguments before they were grouped: accepted with a warning."""


def grouped(
    legacy: dict[str, Any],
    caller: CallerInputs | None,
    compaction: CompactionOrder | None,
    request_id: str | None,
) -> tuple[CallerInputs | None, CompactionOrder | None, str | None]:
    """The former keywords of `prepare` (``legacy``), folded into their groups with a warning
    each; an unknown one raises the `TypeError` Python raises for it."""
    unknown = sorted(set(legacy) - set(_LEGACY))
    if unknown:
        msg = f"prepare() got an unexpected keyword argument {unknown[0]!r}"
        raise TypeError(msg)
    groups: dict[str, dict[str, Any]] = {"caller": {}, "compaction": {}}
    for name, value in legacy.items():
        group, field = _LEGACY[name]
        kind = "CallerInputs" if group == "caller" else "CompactionOrder"
        new = f"{group}={kind}({field}=...)" if group else "request_id="
        warnings.warn(f"prepare({name}=) is now {new}", DeprecationWarning, stacklevel=3)
        if group:
            groups[group][field] = value
        else:
            request_id = request_id or value
    if groups["caller"]:
        caller = dataclasses.replace(caller or CallerInputs(), **groups["caller"])
    if groups["compaction"]:
        compaction = dataclasses.replace(compaction or CompactionOrder(), **groups["compaction"])
    return caller, compaction, request_id
