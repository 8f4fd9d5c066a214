"""Manual and agentic compression of the agent's working context (002's compress_context and
CompressContext tool)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ctxlab._config import ContextConfig, require_config
from ctxlab._state import WorkingState
from ctxlab.agent._events import CompactionKind
from ctxlab.exceptions import CompressionError
from ctxlab.messages import HintBlock, ToolResultBlock, ToolUseBlock
from ctxlab.models import Model
from ctxlab.pipeline import CompactionRecord, Preparation, Purpose

__all__ = ["CompressionMixin", "PendingCompaction"]

PendingCompaction = tuple[
    ContextConfig | None, str | None, bool, asyncio.Future[CompactionRecord | None]
]
"""A compression asked for while a call runs: config, hint, force, and its future."""


class CompressionMixin:
    """`Agent.compress_context` and the CompressContext tool."""

    if TYPE_CHECKING:
        _background: asyncio.Future[None] | None
        _config: ContextConfig
        _pending_compactions: list[PendingCompaction]
        _running: bool
        _state: WorkingState
        model: Model

        async def _prepare(
            self,
            purpose: Purpose,
            *,
            config: ContextConfig | None = None,
            force: bool = False,
            threshold: int | None = None,
            instructions: str | None = None,
            kind: CompactionKind | None = None,
        ) -> Preparation: ...

    async def compress_context(
        self,
        context_config: ContextConfig | None = None,
        instructions: HintBlock | str | None = None,
        *,
        force: bool = False,
    ) -> CompactionRecord | None:
        """Compress the working context now if it is above the trigger; a no-op below it.

        ``context_config`` overrides the agent's config for this call only; ``instructions`` (a
        `HintBlock` or text) guide the summary. Returns what was compacted, or None. With
        ``compression_fallback_to_truncation=False`` a failed summary raises `CompressionError`
        and leaves the context untouched. While a call runs, the compression happens at its next
        step boundary and this returns once it has. ``force=True`` compacts whatever the size
        (the notebook's "Compact now"; still keeps the latest turn, so a tiny context may have
        nothing to compact).
        """
        if context_config is not None:
            require_config(context_config)
        hint = instructions.hint if isinstance(instructions, HintBlock) else instructions
        if self._running:
            future: asyncio.Future[CompactionRecord | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._pending_compactions.append((context_config, hint, force, future))
            return await future
        return await self._compress(context_config, hint, force)

    async def _compress(
        self,
        config: ContextConfig | None,
        hint: str | None,
        force: bool = False,
        *,
        threshold: int | None = None,
        kind: CompactionKind | None = None,
    ) -> CompactionRecord | None:
        if not self._state.conversation:
            return None
        before = self._state
        prep = await self._prepare(
            "compaction",
            config=config,
            instructions=hint,
            force=force,
            threshold=threshold,
            kind=kind,
        )
        if prep.compaction is None:
            self._state = before  # light passes alone do not make a compression
        return prep.compaction

    def _run_pending_after_call(self) -> None:
        # The call ended before another boundary: the queued compressions run now, after it.
        pending, self._pending_compactions = self._pending_compactions, []
        if pending:
            self._background = asyncio.ensure_future(self._run_pending(pending))

    async def _run_pending(
        self,
        pending: list[PendingCompaction],
    ) -> None:
        for config, hint, force, future in pending:
            try:
                future.set_result(await self._compress(config, hint, force))
            except Exception as exc:
                future.set_exception(exc)

    async def _compress_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        config = self._config
        lines = config.thresholds(self.model.context_window)
        # 002: the tool works from the usage-notice line, and a failure leaves the context as is.
        strict = config.merge(compression_fallback_to_truncation=False)
        hint = use.input.get("instructions")
        try:
            record = await self._compress(
                strict,
                hint if isinstance(hint, str) else None,
                threshold=lines["notice_tokens"],
                kind="agentic",
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
                    f"Nothing to compress: the context is below "
                    f"{lines['notice_tokens']} tokens, where compression starts."
                ),
            )
        return ToolResultBlock(
            tool_use_id=use.id,
            content=(
                f"Compressed {record.messages_compacted} earlier messages into a summary: "
                f"{record.tokens_before} -> {record.tokens_after} tokens."
            ),
        )
