"""`ToolRunner`: runs one step's tool calls — the permission decision first, then the calls in
parallel, each as an event pair (call, result); built-in tools are handlers passed in."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

from ctxlab.agent._tools import Tool
from ctxlab.events import Event, ToolCallEvent, ToolResultEvent
from ctxlab.exceptions import UsageError
from ctxlab.messages import ToolResultBlock, ToolUseBlock

__all__ = ["Approver", "BuiltinHandler", "PermissionHook", "ToolRunner"]

Decision = Literal["allow", "deny", "ask"]
PermissionHook = Callable[
    [ToolUseBlock], Decision | tuple[Decision, str] | Awaitable[Decision | tuple[Decision, str]]
]
"""Decides a tool call: ``"allow"``, ``"deny"`` or ``"ask"`` (optionally with a reason)."""
Approver = Callable[[ToolUseBlock], bool | Awaitable[bool]]
"""Answers the calls a permission hook sent to ``"ask"``: True runs the tool."""
BuiltinHandler = Callable[[ToolUseBlock], Awaitable[ToolResultBlock]]
"""Runs a built-in tool (CompressContext, todo_write, ...)."""


class ToolRunner:
    """Decides and runs tool calls for an agent."""

    def __init__(
        self,
        tools: dict[str, Tool],
        emit: Callable[[Event], None],
        *,
        permission: PermissionHook | None = None,
        approver: Approver | None = None,
    ) -> None:
        self.tools = tools
        self.permission = permission
        self.approver = approver
        self._emit = emit

    async def decide(
        self, use: ToolUseBlock, always_allowed: bool = False
    ) -> tuple[Literal["allow", "deny"], str]:
        """The permission decision for ``use`` (the approver answers "ask")."""
        tool = self.tools.get(use.name)
        if always_allowed or self.permission is None or (tool is not None and tool.always_allowed):
            return "allow", ""
        answer = self.permission(use)
        if inspect.isawaitable(answer):
            answer = await answer
        decision, reason = answer if isinstance(answer, tuple) else (answer, "")
        if decision == "ask":
            if self.approver is None:
                return "deny", reason or "the call needs approval and no approver is attached"
            approved = self.approver(use)
            if inspect.isawaitable(approved):
                approved = await approved
            return ("allow", "") if approved else ("deny", reason or "the user declined")
        if decision not in ("allow", "deny"):
            msg = f"the permission hook returned {decision!r}; return 'allow', 'deny' or 'ask'"
            raise UsageError(msg)
        return decision, reason

    async def run(
        self,
        uses: Sequence[ToolUseBlock],
        builtins: Mapping[str, BuiltinHandler],
        call: str,
        *,
        last: frozenset[str] = frozenset(),
    ) -> list[ToolResultBlock]:
        """Run ``uses`` and return their results in call order. Built-ins named in ``last`` run
        after the others, one by one (CompressContext changes the working state)."""
        decisions = [await self.decide(use, use.name in last) for use in uses]
        for use, (decision, _) in zip(uses, decisions, strict=True):
            self._emit(ToolCallEvent(use, decision, call))

        async def run_one(use: ToolUseBlock, decision: str, reason: str) -> ToolResultBlock:
            loop = asyncio.get_running_loop()
            start = loop.time()
            result = await self._result(use, decision, reason, builtins)
            self._emit(ToolResultEvent(use, result, loop.time() - start, call))
            return result

        results: dict[int, ToolResultBlock] = {}
        parallel = [i for i, use in enumerate(uses) if use.name not in last]
        outputs = await asyncio.gather(*(run_one(uses[i], *decisions[i]) for i in parallel))
        results.update(zip(parallel, outputs, strict=True))
        for i, use in enumerate(uses):
            if i not in results:
                results[i] = await run_one(use, *decisions[i])
        return [results[i] for i in range(len(uses))]

    async def _result(
        self, use: ToolUseBlock, decision: str, reason: str, builtins: Mapping[str, BuiltinHandler]
    ) -> ToolResultBlock:
        if decision == "deny":
            return ToolResultBlock(
                tool_use_id=use.id,
                content=f"Permission denied for {use.name}: {reason or 'denied'}.",
                is_error=True,
            )
        handler = builtins.get(use.name)
        if handler is not None:
            return await handler(use)
        if use.name in self.tools:
            return await self.tools[use.name].run(use.id, use.input)
        known = ", ".join(sorted(self.tools)) or "none"
        return ToolResultBlock(
            tool_use_id=use.id,
            content=f"There is no tool named {use.name!r}. Available tools: {known}.",
            is_error=True,
        )
