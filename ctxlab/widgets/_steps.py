"""The Lab's record of a session: one row per reasoning request, built from the agent's events.

Pure Python (no widgets), so it is cheap to test and its per-step cost is measurable on its own.
Columns are kept as growing lists; the DataFrame is built only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab._request import ModelRequest
from ctxlab.agent import (
    CompactionEvent,
    ContextBuildEvent,
    Event,
    ModelResponseEvent,
)
from ctxlab.manifest import PLACEMENTS, ContextManifest

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STEP_COLUMNS", "CompactionMark", "StepLog"]

REASONING = ("reasoning", "recovery")

STEP_COLUMNS = (
    "step",
    "call_id",
    "call",
    "purpose",
    *PLACEMENTS,
    "total",
    "input_limit",
    "notice_tokens",
    "trigger_tokens",
    "validation",
    "transforms",
    "offloads",
    "omissions",
    "compaction",
    "usage_input",
    "usage_output",
    "usage_cache_read",
    "usage_cache_write",
)


@dataclass(frozen=True, slots=True)
class CompactionMark:
    """A compaction, placed after the step it followed."""

    step: int
    """The request it belongs to, or the last request before it (-1 before any)."""
    kind: str
    tokens_before: int
    tokens_after: int
    within: bool = False
    """True when it happened while preparing request ``step``; False when after it."""


@dataclass
class StepLog:
    """Rows of reasoning requests and the compactions between them."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    manifests: list[ContextManifest] = field(default_factory=list)
    requests: list[ModelRequest | None] = field(default_factory=list)
    compactions: list[CompactionMark] = field(default_factory=list)
    _by_call_id: dict[str, int] = field(default_factory=dict)
    _frame: Any = None
    _last_purpose: str = ""

    def feed(self, event: Event) -> int | None:
        """Take one event; returns the step it added or changed (None when nothing changed)."""
        if isinstance(event, ContextBuildEvent):
            manifest = event.manifest
            self._last_purpose = manifest.purpose
            if manifest.purpose not in REASONING:
                return None
            return self._add(event, manifest)
        if isinstance(event, ModelResponseEvent):
            index = self._by_call_id.get(event.call_id)
            if index is None or event.usage is None:
                return None
            row = self.rows[index]
            row["usage_input"] = event.usage.input_tokens
            row["usage_output"] = event.usage.output_tokens
            row["usage_cache_read"] = event.usage.cache_read_input_tokens
            row["usage_cache_write"] = event.usage.cache_creation_input_tokens
            self._frame = None
            return index
        if isinstance(event, CompactionEvent):
            # The event follows the context_build of the preparation that compacted: a reasoning
            # request's own compaction belongs to its row; a manual or agentic one falls between
            # that row and the next.
            step = len(self.rows) - 1
            within = self._last_purpose in REASONING and step >= 0
            self.compactions.append(
                CompactionMark(step, event.kind, event.tokens_before, event.tokens_after, within)
            )
            if within:
                self.rows[step]["compaction"] = event.kind
                self._frame = None
            return step
        return None

    def _add(self, event: ContextBuildEvent, manifest: ContextManifest) -> int:
        step = len(self.rows)
        totals = manifest.totals
        kinds = [t.kind for t in manifest.transforms]
        row: dict[str, Any] = {
            "step": step,
            "call_id": manifest.call_id,
            "call": event.call,
            "purpose": manifest.purpose,
            **totals,
            "total": manifest.estimated_input_tokens,
            "input_limit": manifest.input_limit,
            "notice_tokens": manifest.thresholds.get("notice_tokens", 0),
            "trigger_tokens": manifest.thresholds.get("trigger_tokens", 0),
            "validation": manifest.validation,
            "transforms": len(kinds),
            "offloads": sum(1 for k in kinds if k.endswith("offload")),
            "omissions": sum(1 for k in kinds if k == "omitted_for_budget"),
            "compaction": "",
            "usage_input": None,
            "usage_output": None,
            "usage_cache_read": None,
            "usage_cache_write": None,
        }
        self.rows.append(row)
        self.manifests.append(manifest)
        self.requests.append(event.request)
        self._by_call_id[manifest.call_id] = step
        self._frame = None
        return step

    def frame(self) -> pd.DataFrame:
        """One row per reasoning request (cached until the next change)."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame(self.rows, columns=list(STEP_COLUMNS))
        frame: pd.DataFrame = self._frame
        return frame

    def __len__(self) -> int:
        return len(self.rows)
