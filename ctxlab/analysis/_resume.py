"""Which steps of an earlier replay a replay under another config can take as they are.

A replay is a chain: each request is prepared from the state the previous one committed. Two
configs that differ only in where compaction fires and what it keeps (``trigger_ratio``,
``reserve_ratio``) prepare the same request from the same state as long as neither compacts:
the conversation is only appended to, tool results are cut by the same limit, and the manifest
differs only in the lines it carries (`Thresholds`). So the new replay's requests equal the
earlier ones up to the first step where either config's *decision* may differ — the first
compaction (or cut, or omission) of the earlier replay, or the first request whose size
reaches the lowest line of the two configs: a trigger, the usage notice's line (the notice
joins every request past it and names the trigger; the size is taken with the notice's
allowance, `NOTICE_ALLOWANCE`, which the pipeline adds to the size it tests), or the line a
config that compacts while idle compacts from after a long pause — and from there it must be
prepared again.

Everything else a config holds can change what is cut or sent at any step: a config that
differs in any other field, or that turns on what acts below the trigger (light passes, a
message trigger, the compression tool and its usage notice, provider edits), reuses nothing.
The rule is proved against full replays over generated configs
(``tests/analysis/test_resume.py``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ctxlab.config._config import ContextConfig, require_config
from ctxlab.manifest import Thresholds
from ctxlab.pipeline._compaction import NOTICE_ALLOWANCE

if TYPE_CHECKING:
    from ctxlab.analysis._config_run import ConfigRun
    from ctxlab.analysis._replay import ReplayStep

__all__ = ["TUNED_FIELDS", "first_decision", "reusable_steps"]

TUNED_FIELDS = frozenset({"trigger_ratio", "reserve_ratio"})
"""The config fields a replay may differ in and still reuse an earlier one's first steps."""


def _below_trigger_only(config: ContextConfig) -> bool:
    # Nothing acts on a request below the trigger: no light pass, no message trigger, no usage
    # notice (its line moves with the trigger), no provider edits. (Compacting while idle
    # acts below it, from its own line: `first_decision` counts that line.)
    passes = config.compaction
    return (
        passes.truncate_args is None
        and passes.mask is None
        and passes.trigger_messages is None
        and not config.compression_tool_enabled
        and config.provider_edits is None
        and config.on_demand is None  # asks below the trigger, by its own rules
    )


def first_decision(earlier: ConfigRun, config: ContextConfig, context_window: int) -> int:
    """The first step of ``earlier`` whose request ``config`` may prepare differently (0 when
    the configs differ beyond `TUNED_FIELDS`, or either acts below the trigger); its length
    when no step may."""
    old, new = require_config(earlier.config), require_config(config)
    if not (_below_trigger_only(old) and _below_trigger_only(new)):
        return 0
    if old.model_dump(exclude=set(TUNED_FIELDS)) != new.model_dump(exclude=set(TUNED_FIELDS)):
        return 0
    lines = Thresholds.compute(old, context_window), Thresholds.compute(new, context_window)
    if lines[0].input_limit != lines[1].input_limit:
        return 0
    # The lowest line either config acts at: a trigger, the usage notice's line (the notice
    # joins every request past it, compression tool or not, and names the trigger), or the
    # line it compacts from after a long pause (the same ratio in both: no tuned field).
    line = min(min(x.trigger_tokens, x.notice_tokens) for x in lines)
    if new.compaction.idle_ratio is not None:
        line = min(line, round(new.compaction.idle_ratio * lines[1].context_size))
    for number, step in enumerate(earlier.prepared):
        manifest = step.manifest
        # A step that compacted, cut or omitted anything, or whose size (plus the notice's
        # room the due check adds) reaches a line, is a decision.
        if (
            step.compaction is not None
            or manifest.transforms
            or manifest.estimated_input_tokens + NOTICE_ALLOWANCE >= line
        ):
            return number
    return len(earlier.prepared)


def reusable_steps(
    earlier: ConfigRun, config: ContextConfig, context_window: int
) -> list[ReplayStep]:
    """The first steps of ``earlier`` as a replay under ``config`` prepares them: each before
    the step that prepares the first decision (that step is prepared again, so the request a
    decision's summary call builds on is at hand), its manifest carrying ``config``'s lines."""
    decision = first_decision(earlier, config, context_window)
    keep = max(decision - 1, 0)
    if not keep:
        return []
    lines = Thresholds.compute(require_config(config), context_window)
    return [
        dataclasses.replace(s, manifest=dataclasses.replace(s.manifest, thresholds=lines))
        for s in earlier.prepared[:keep]
    ]
