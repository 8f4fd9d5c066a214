"""The auto-compaction thresholds Claude Code documents, by version (`SessionFormat.thresholds`):
where a recorded compaction should have fired.

From 2.1.21: auto-compact at the model's window less the summary's output reservation
(``min(max output, 20,000)``: 20,000 for every current model) less a 13,000-token buffer —
167,000 of a 200,000 window. ``services/compact/autoCompact.ts`` (``getAutoCompactThreshold``,
``AUTOCOMPACT_BUFFER_TOKENS = 13_000``, ``MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000``), as the 2.1
source map shows it. It compares the last response's usage — input, cache reads and writes, and
output — plus an estimate of what came after. From 2.0 to 2.1.20 the whole 32,000-token output
default was reserved (155,000 of 200,000; the CHANGELOG's 2.1.21 fix)."""

from __future__ import annotations

from ctxlab.config._harness_presets import claude_code_trigger
from ctxlab.io._compaction_thresholds import ToolThreshold

__all__ = ["THRESHOLDS"]

# One table with the presets (`ContextConfig.preset("claude_code")`, ...): each row's figure is
# the preset's own function, so a replay under the tool's rules and the place its recorded
# compactions are read against never disagree.
THRESHOLDS = (
    ToolThreshold(
        "claude_code",
        ((2, 0), (2, 1, 21)),
        "window − 32,000 (the output reserved whole) − 13,000",
        "Claude Code CHANGELOG 2.1.21 (auto-compact triggering too early on models with large "
        "output token limits: the whole 32,000 reserved before)",
        lambda window: claude_code_trigger(window, before_2_1_21=True),
    ),
    ToolThreshold(
        "claude_code",
        ((2, 1, 21), None),
        "window − min(max output, 20,000) − 13,000",
        "Claude Code services/compact/autoCompact.ts (getAutoCompactThreshold), 2.1",
        claude_code_trigger,
    ),
)
