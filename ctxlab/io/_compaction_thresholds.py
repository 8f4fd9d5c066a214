"""The auto-compaction thresholds the harnesses document, by tool and version, each with its
source (a tool's own code is the specification of its policy): where a recorded compaction
*should* have fired. Each format declares its tool's rows (``SessionFormat.thresholds``: Claude
Code's in ``formats/claude_code/thresholds.py``, Codex's and Gemini CLI's beside their
declarations); this module asks the registry for them. `sessions` reads them for its compaction
columns; the analysis of where each compaction really fired is
`ctxlab.analysis.compaction_sites`.

A version outside a known range, a tool without a row, or a model whose window is not known
gives no threshold (None), never another's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxlab.io._registry import format_named, formats
from ctxlab.messages import AssistantMessage
from ctxlab.models._anthropic_limits import context_window_of

__all__ = [
    "COMPACTION_COLUMNS",
    "FAR_FROM_THRESHOLD",
    "ToolThreshold",
    "compaction_columns",
    "documented_threshold",
    "thresholds",
    "window_of",
]

FAR_FROM_THRESHOLD = 0.10
"""A compaction fired *far* from its threshold when the billed context differs from it by more
than this share of it (the Lab marks those)."""


@dataclass(frozen=True)
class ToolThreshold:
    """The auto-compaction threshold a tool documents for a range of its versions."""

    tool: str
    """The transcript's ``source``: the format that declares it."""
    versions: tuple[tuple[int, ...], tuple[int, ...] | None]
    """The first version it holds for and the first it no longer does (None: still)."""
    rule: str
    """The rule in words."""
    source: str
    """Where it is read from."""
    at: Callable[[int], int]
    """The threshold at a context window."""

    def holds_for(self, version: str | None) -> bool:
        """Whether ``version`` is in the range (an unknown version is in none)."""
        parsed = _version(version)
        if parsed is None:
            return False
        first, stop = self.versions
        return parsed >= first and (stop is None or parsed < stop)


def thresholds() -> tuple[ToolThreshold, ...]:
    """The documented thresholds of every registered format, by tool and version range."""
    return tuple(row for declared in formats() for row in declared.thresholds)


def _version(text: str | None) -> tuple[int, ...] | None:
    # "2.1.39" → (2, 1, 39); a suffix ("-beta") is ignored, anything else is unknown.
    if not isinstance(text, str) or not text:
        return None
    parts: list[int] = []
    for piece in text.strip().lstrip("v").split("."):
        digits = "".join(c for c in piece.split("-")[0] if c.isdigit())
        if not digits or digits != piece.split("-")[0]:
            return tuple(parts) if parts else None
        parts.append(int(digits))
    return tuple(parts)


def documented_threshold(
    tool: str | None, version: str | None, context_window: int | None
) -> tuple[int, ToolThreshold] | None:
    """The threshold ``tool`` documents for ``version`` at ``context_window``, with its row
    (None when no row holds or the window is unknown)."""
    declared = format_named(tool) if isinstance(tool, str) else None
    if context_window is None or declared is None:
        return None
    for row in declared.thresholds:
        if row.holds_for(version):
            return row.at(context_window), row
    return None


def window_of(model: object) -> int | None:
    """The context window of ``model`` when it is known by name (Claude's), else None."""
    # Claude's windows are known by name; another model's only when the caller says.
    if not isinstance(model, str) or not model.startswith("claude-"):
        return None
    return context_window_of(model)


COMPACTION_COLUMNS = (
    "compaction_version",
    "compaction_threshold",
    "compactions_fired_at",
    "compactions_vs_threshold",
)
"""`sessions`' compaction columns: the version that wrote the session's compactions, the
threshold it documents, and each compaction's billed context at its boundary (the last reply's
usage: input, cache reads and writes, output) and its difference to the threshold."""


def compaction_columns(transcript: Any) -> dict[str, Any]:
    """`COMPACTION_COLUMNS` of one transcript (compactions only, not microcompacts)."""
    records = transcript.meta.get("compactions")
    records = [
        r
        for r in (records if isinstance(records, list) else ())
        if isinstance(r, dict) and r.get("kind", "compact") == "compact"
    ]
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    versions = [r.get("version") for r in records if isinstance(r.get("version"), str)]
    tool = transcript.meta.get("source")
    models = transcript.meta.get("reply_models")
    models = models if isinstance(models, dict) else {}  # a file's odd meta costs the model
    fired: list[int | None] = []
    differences: list[int | None] = []
    threshold: int | None = None
    for record in records:
        before = record.get("replies_before")
        index = (
            replies[before - 1] if isinstance(before, int) and 0 < before <= len(replies) else None
        )
        usage = transcript.usage.get(index) if index is not None else None
        model = models.get(str(before - 1)) if isinstance(before, int) else None
        found = documented_threshold(tool, record.get("version"), window_of(model))
        context = None if usage is None else usage.total_input_tokens + usage.output_tokens
        threshold = found[0] if found else threshold
        fired.append(context)
        differences.append(None if context is None or not found else context - found[0])
    return {
        "compaction_version": versions[-1] if versions else None,
        "compaction_threshold": threshold,
        "compactions_fired_at": tuple(fired),
        "compactions_vs_threshold": tuple(differences),
    }
