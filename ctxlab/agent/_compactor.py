"""`Compactor`: manual and agentic compression of the working context (002's
``compress_context`` and the CompressContext tool), queued to a step boundary while a call runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import CompressionError
from ctxlab.manifest import CompactionTrigger, Thresholds
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from ctxlab.pipeline import CompactionRecord

__all__ = ["CompactFn", "Compactor", "PendingCompaction"]

CompactFn = Callable[
    [ContextConfig | None, str | None, bool, int | None, CompactionTrigger],
    Awaitable[CompactionRecord | None],
]
"""Prepares a compaction and commits it only when one happened: (config, hint, force,
threshold, trigger) -> the record, or None when nothing was compacted."""


@dataclass(frozen=True)
class PendingCompaction:
    """A compression asked for while a call runs, done at its next step boundary."""

    config: ContextConfig | None
    hint: str | None
    force: bool
    future: asyncio.Future[CompactionRecord | None]


class Compactor:
    """Runs compressions now, or at the next step boundary of a running call."""

    def __init__(self, compact: CompactFn) -> None:
        self._compact = compact
        self._pending: list[PendingCompaction] = []
        self.background: asyncio.Future[None] | None = None
        """Compressions queued by a call that ended before its next boundary, run after it."""

    async def compress(
        self, config: ContextConfig | None, hint: str | None, force: bool, *, running: bool
    ) -> CompactionRecord | None:
        """Compress now, or (while a call runs) at its next boundary; returns once done."""
        if not running:
            return await self._compact(config, hint, force, None, "manual")
        future: asyncio.Future[CompactionRecord | None] = asyncio.get_running_loop().create_future()
        self._pending.append(PendingCompaction(config, hint, force, future))
        return await future

    async def at_boundary(self) -> None:
        """Run what was queued while the call ran."""
        pending, self._pending = self._pending, []
        await self._run(pending)

    def after_call(self) -> None:
        """The call ended before another boundary: the queued compressions run now, after it."""
        pending, self._pending = self._pending, []
        if pending:
            self.background = asyncio.ensure_future(self._run(pending))

    async def _run(self, pending: list[PendingCompaction]) -> None:
        for item in pending:
            try:
                item.future.set_result(
                    await self._compact(item.config, item.hint, item.force, None, "manual")
                )
            except Exception as exc:
                item.future.set_exception(exc)

    async def tool(
        self, use: ToolUseBlock, config: ContextConfig, lines: Thresholds
    ) -> ToolResultBlock:
        """The CompressContext tool: compacts from the usage-notice line; on failure the context
        is left unchanged and the model gets an error result (002)."""
        strict = config.merge(compression_fallback_to_truncation=False)
        hint = use.input.get("instructions")
        try:
            record = await self._compact(
                strict,
                hint if isinstance(hint, str) else None,
                False,
                lines.notice_tokens,
                "agentic",
            )
        except CompressionError as exc:
            return ToolResultBlock(
                tool_use_id=use.id,
                content=f"Compression failed; the context is unchanged. {exc}",
                is_error=True,
            )
        if record is None:
            return ToolResultBlock(
                tool_use_id=use.id,
                content=(
                    f"Nothing to compress: the context is below {lines.notice_tokens} tokens, "
                    "where compression starts."
                ),
            )
        return ToolResultBlock(
            tool_use_id=use.id,
            content=(
                f"Compressed {record.messages_compacted} earlier messages into a summary: "
                f"{record.tokens_before} -> {record.tokens_after} tokens."
            ),
        )
