"""The thresholds: the trigger is capped by the input limit."""

from __future__ import annotations

from ctxlab import ContextConfig
from ctxlab.manifest import Thresholds


def test_the_trigger_is_capped_by_the_input_limit() -> None:
    # At trigger 0.9 of a 10k window, 9,000 > the 8,550 input limit: compaction must fire
    # before the output reservation is eaten.
    lines = Thresholds.compute(ContextConfig(trigger_ratio=0.9), 10_000)
    assert lines.trigger_tokens == lines.input_limit == 8_550
