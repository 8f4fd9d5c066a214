"""`PreparationMemo`: what one preparer reuses between its consecutive preparations, owned by
the caller and passed to `prepare` (nothing is parked on the token counter or in a process-wide
table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.config._config import ContextConfig, require_config
from ctxlab.manifest import Thresholds

if TYPE_CHECKING:
    from ctxlab.messages._request import ToolSchema
    from ctxlab.pipeline._common_step import LastStep
    from ctxlab.pipeline._scan import ConversationScan
    from ctxlab.pipeline._stages import FixedPart

__all__ = ["PreparationMemo"]


@dataclass
class PreparationMemo:
    """What one preparer (an agent, a replay) reuses between its consecutive preparations.

    Every entry is checked against its inputs before use, so a memo never changes a result, only
    its cost; a fresh memo (or none) gives the same request and manifest.
    """

    thresholds: tuple[ContextConfig, int | None, int | None, ContextConfig, Thresholds] | None = (
        None
    )
    """The last (config, window, output size), the checked config and its lines: recomputed
    when one changes."""
    fixed: FixedPart | None = None
    """System and tool schemas, itemized: rebuilt when either changes."""
    scan: ConversationScan | None = None
    """The last processed conversation: the next step processes only what was appended."""
    tools: tuple[ToolSchema, ...] | None = None
    """The last tools tuple checked (a tuple of `ToolSchema`: checked once, not at every step)."""
    last: LastStep | None = None
    """What the last successful preparation left for a common next step (`_common_step`)."""
    method: str | None = None
    """The counting method of what ``fixed``, ``scan`` and ``last`` hold (`counted_by`)."""

    def counted_by(self, method: str) -> None:
        """Forget what another counting method counted: the counts ``fixed``, ``scan`` and
        ``last`` hold are that method's. A new counter of the same method is the same counting
        (as `CountStore` keys counts by method), so ``counter=default_counter()`` made anew at
        each step keeps the memo."""
        if method != self.method:
            self.fixed = self.scan = self.last = None
            self.method = method

    def thresholds_for(
        self,
        config: ContextConfig,
        context_window: int | None,
        max_output_tokens: int | None = None,
    ) -> Thresholds:
        """The lines of ``config`` at ``context_window``, computed once per change."""
        return self.checked(config, context_window, max_output_tokens)[1]

    def checked(
        self,
        config: ContextConfig,
        context_window: int | None,
        max_output_tokens: int | None = None,
    ) -> tuple[ContextConfig, Thresholds]:
        """``config`` validated (whatever reaches a preparation is valid) and its lines; both
        computed once per new config, window or output size."""
        if self.thresholds is not None:
            old_config, old_window, old_output, valid, lines = self.thresholds
            if (
                old_config is config
                and old_window == context_window
                and old_output == max_output_tokens
            ):
                return valid, lines
        valid = require_config(config)
        lines = Thresholds.compute(valid, context_window, max_output_tokens)
        self.thresholds = (config, context_window, max_output_tokens, valid, lines)
        return valid, lines
