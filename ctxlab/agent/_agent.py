"""`Agent`: the reasoning–tool–result loop with every request prepared by the pipeline.

One ``await agent(message)`` is one *call*: the message joins the working state, then the loop
prepares a request, sends it, records the answer, runs the tools it asks for (permission first,
in parallel) and prepares again, until the model answers with no tool calls. Every preparation
emits a ``context_build`` event with its manifest; the prepared state is committed only when
validation passed. The working state (what the model sees, compacted) is kept apart from the
durable history (everything that was said), which compaction never rewrites.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ctxlab._config import ContextConfig
from ctxlab._request import ModelRequest, ToolSchema
from ctxlab._state import WorkingState
from ctxlab._tasks import TaskOptions, TaskState, TodoItem, Verification
from ctxlab.agent._events import (
    CompactionEvent,
    CompactionKind,
    ContextBuildEvent,
    ErrorEvent,
    Event,
    ModelResponseEvent,
    ReplyEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnCommittedEvent,
)
from ctxlab.agent._tools import Tool
from ctxlab.exceptions import (
    AgentBusy,
    CallStopped,
    CompressionError,
    ContextOverflowError,
    MaxStepsExceeded,
    PreparationError,
    SourceError,
    SourceUnavailable,
    UsageError,
)
from ctxlab.manifest import ContextManifest
from ctxlab.materials import (
    ContextBlock,
    ContextRequest,
    FailurePolicy,
    Material,
    Materials,
    SourceRegistration,
    SystemPart,
    load_sources,
    load_workspace,
    validate_source_name,
)
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    parse_messages,
)
from ctxlab.models import Model, ModelResponse
from ctxlab.pipeline import (
    CompactionRecord,
    Offloader,
    Preparation,
    Purpose,
    SummaryRequest,
    WorkspaceOffloader,
    prepare,
)
from ctxlab.session import LoggedMessage, SessionKey, SessionLog
from ctxlab.tokens import TokenCache, TokenCounter

__all__ = ["COMPRESS_TOOL", "Agent", "Approver", "PermissionHook"]

log = logging.getLogger("ctxlab.agent")

Decision = Literal["allow", "deny", "ask"]
PermissionHook = Callable[
    [ToolUseBlock], Decision | tuple[Decision, str] | Awaitable[Decision | tuple[Decision, str]]
]
"""Decides a tool call: ``"allow"``, ``"deny"`` or ``"ask"`` (optionally with a reason)."""
Approver = Callable[[ToolUseBlock], bool | Awaitable[bool]]
"""Answers the calls a permission hook sent to ``"ask"``: True runs the tool."""

COMPRESS_TOOL = "CompressContext"
_COMPRESS_SCHEMA = ToolSchema(
    COMPRESS_TOOL,
    "Summarize the earlier conversation now, at a boundary between two pieces of work, so the "
    "details still in flight are kept. Only has an effect once the context-usage notice appears.",
    {
        "type": "object",
        "properties": {
            "instructions": {
                "type": "string",
                "description": "What the summary must keep (paths, decisions, open questions).",
            }
        },
        "additionalProperties": False,
    },
)


TODO_TOOL = "todo_write"
_TODO_SCHEMA = ToolSchema(
    TODO_TOOL,
    "Replace your todo list with the full, current list. Mark one item in_progress while you "
    "work on it and completed when done; the current list is shown to you at every step.",
    {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"enum": ["pending", "in_progress", "completed"]},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
)
PROPOSE_TOOL = "propose_requirement"
_PROPOSE_SCHEMA = ToolSchema(
    PROPOSE_TOOL,
    "Propose an acceptance criterion for the task; the user confirms or rejects it.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
_RECEIPT = "Todo list updated (revision {revision}):\n{todos}"
_SHORTENED = "[an earlier todo list, superseded; the current one is shown below]"


def _log_record(event: Event) -> tuple[str, dict[str, Any]] | None:
    """What the session log keeps of an event (messages are logged on their own)."""
    if isinstance(event, ContextBuildEvent):
        return "context_build", {"context_manifest": event.manifest.to_dict()}
    if isinstance(event, CompactionEvent):
        return "compaction", {"kind": event.kind, **dataclasses.asdict(event.record)}
    if isinstance(event, ModelResponseEvent):
        usage = dataclasses.asdict(event.usage) if event.usage else None
        return "model_response", {
            "call_id": event.call_id,
            "stop": event.stop_reason,
            "usage": usage,
        }
    if isinstance(event, ToolResultEvent):
        return "tool_result", {
            "id": event.tool_use.id,
            "name": event.tool_use.name,
            "is_error": bool(event.result.is_error),
            "seconds": event.seconds,
        }
    if isinstance(event, ErrorEvent):
        return "error", {"error": event.message}
    return None


def _user_message(message: Any) -> UserMessage:
    if isinstance(message, UserMessage):
        return message
    if isinstance(message, str):
        if not message.strip():
            msg = "the message is empty; pass the text the agent should act on"
            raise UsageError(msg)
        return UserMessage(content=message)
    if isinstance(message, Mapping):
        parsed = parse_messages([message])[0]
        if isinstance(parsed, UserMessage):
            return parsed
    msg = (
        f"an agent call takes a str, a UserMessage or a user message dict, got "
        f"{type(message).__name__}"
    )
    raise UsageError(msg)


class Agent:
    """A tool-using agent whose every model request is assembled by ctxlab's pipeline.

    Args:
        name: The agent's name (also its default agent id).
        system_prompt: Persistent behaviour; the first part of the System message.
        model: The model; the offline `DemoModel` when omitted.
        tools: Plain typed functions or `Tool` objects.
        context_config: The `ContextConfig` (defaults otherwise); replaceable between steps.
        workspace: A folder for offloaded tool results and images (and, later, the session log).
        permission: A hook deciding each tool call: allow, deny or ask.
        approver: Answers the calls the hook sent to "ask"; without one they are denied.
        counter: The token counter for estimates; the model's when omitted.
        max_steps: Reasoning requests allowed in one call before `MaxStepsExceeded`.
        agent_id: The agent's id in the session log and for sources (the name by default).
        user_id: The user the session belongs to (sessions are never shared across users).
        session_id: The session; a new id by default. With a session log holding committed
            turns of (agent id, user id, session id), the agent resumes that working state.
        session_log: A `SessionLog` or the path of its SQLite file.
    """

    def __init__(
        self,
        name: str = "assistant",
        system_prompt: str = "",
        model: Model | None = None,
        tools: Iterable[Callable[..., Any] | Tool] = (),
        context_config: ContextConfig | None = None,
        workspace: str | Path | None = None,
        *,
        permission: PermissionHook | None = None,
        approver: Approver | None = None,
        counter: TokenCounter | None = None,
        max_steps: int = 50,
        agent_id: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        session_log: SessionLog | str | Path | None = None,
    ) -> None:
        if model is None:
            from ctxlab.models import DemoModel

            model = DemoModel()
        if not isinstance(model, Model):
            msg = f"model must be a ctxlab Model (AnthropicModel, DemoModel, ...), got {model!r}"
            raise UsageError(msg)
        if context_config is not None and not isinstance(context_config, ContextConfig):
            msg = f"context_config must be a ContextConfig, got {type(context_config).__name__}"
            raise UsageError(msg)
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self._config = context_config or ContextConfig()
        self.workspace = Path(workspace) if workspace is not None else None
        self.offloader: Offloader | None = (
            WorkspaceOffloader(self.workspace) if self.workspace is not None else None
        )
        self.permission = permission
        self.approver = approver
        self.max_steps = max_steps
        self.tools: dict[str, Tool] = {}
        for item in tools:
            self.add_tool(item)
        self._cache = TokenCache(counter or model.counter)
        self._state = WorkingState()
        self._history: list[Message] = []
        self.manifests: list[ContextManifest] = []
        """Every preparation's manifest, in order (provider usage added once known)."""
        self._subscribers: list[Callable[[Event], Any]] = []
        self._running = False
        self._stop = False
        self._call = ""
        self._last_request: ModelRequest | None = None
        self._previous: ContextManifest | None = None
        self._background: asyncio.Future[None] | None = None
        self._pending_compactions: list[
            tuple[ContextConfig | None, str | None, bool, asyncio.Future[CompactionRecord | None]]
        ] = []
        self.agent_id = agent_id or name
        self.user_id = user_id
        self.session_id = session_id or uuid.uuid4().hex
        self.sources: dict[str, SourceRegistration] = {}
        """Registered context sources by name (their options can be edited between steps)."""
        self.instructions: dict[str, str] = {}
        """Named instructions, placed in System after the system prompt."""
        self._workspace_material: tuple[tuple[SystemPart, ...], tuple[Material, ...]] | None = None
        self.task = TaskState()
        """The task state (todo list, requirements, verification); survives compaction."""
        self.task_options = TaskOptions()
        self._todo_enabled = False
        self._unlogged_messages: list[Message] = []
        self._unlogged_events: list[tuple[str, dict[str, Any]]] = []
        self.session_log: SessionLog | None = (
            session_log
            if isinstance(session_log, SessionLog) or session_log is None
            else SessionLog(session_log)
        )
        if self.session_log is not None:
            self._resume()

    # -- inspection ---------------------------------------------------------------------------

    @property
    def context(self) -> WorkingState:
        """The working state the next request is prepared from (conversation and summary)."""
        return self._state

    @property
    def history(self) -> tuple[Message, ...]:
        """Every message of the session, uncompacted: the durable record."""
        return tuple(self._history)

    @property
    def context_config(self) -> ContextConfig:
        """The config in force; a new one applies from the next preparation."""
        return self._config

    @context_config.setter
    def context_config(self, config: ContextConfig) -> None:
        if not isinstance(config, ContextConfig):
            msg = f"context_config must be a ContextConfig, got {type(config).__name__}"
            raise UsageError(msg)
        self._config = config

    @property
    def running(self) -> bool:
        """True while a call is in progress."""
        return self._running

    @property
    def token_cache(self) -> TokenCache:
        """The agent's token cache (counts by content hash)."""
        return self._cache

    def add_tool(self, item: Callable[..., Any] | Tool) -> Tool:
        """Register a tool (a typed function or a `Tool`); names must be unique."""
        made = item if isinstance(item, Tool) else Tool.from_function(item)
        if made.name in self.tools or made.name in (COMPRESS_TOOL, TODO_TOOL, PROPOSE_TOOL):
            msg = f"a tool named {made.name!r} is already registered; rename one of them"
            raise UsageError(msg)
        self.tools[made.name] = made
        return made

    # -- events -------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns the function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, event: Event) -> None:
        if self.session_log is not None:
            record = _log_record(event)
            if record is not None:
                self._unlogged_events.append(record)
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                # A broken observer (a panel) must not break the agent; it is logged, not hidden.
                log.exception("event subscriber %r failed on %s", callback, event.type)

    # -- calls --------------------------------------------------------------------------------

    async def __call__(self, message: Any = None) -> AssistantMessage:
        """Run one call; see `call`."""
        return await self.call(message)

    async def call(self, message: Any = None) -> AssistantMessage:
        """Add ``message`` and run the loop until the model replies without tool calls.

        Returns the reply. Raises `PreparationError` subclasses, `ModelError` subclasses,
        `MaxStepsExceeded` or `CallStopped`; an ``error`` event precedes each.
        """
        if self._running:
            msg = "the agent is already running a call; await it or call agent.stop() first"
            raise AgentBusy(msg)
        self._running, self._stop = True, False
        self._call = uuid.uuid4().hex[:12]
        try:
            # 000: workspace material is loaded once per agent call.
            self._workspace_material = await asyncio.to_thread(load_workspace, self.workspace)
            self._close_interrupted_calls()
            if message is not None:
                self._append(_user_message(message))
            elif not self._state.conversation:
                msg = "the agent has no conversation yet; pass a message"
                raise UsageError(msg)
            await self._commit_turn()
            for _ in range(self.max_steps):
                await self._boundary()
                reply = await self._step()
                await self._commit_turn()
                if reply is not None:
                    return reply
            msg = (
                f"the agent made {self.max_steps} reasoning requests without replying; raise "
                "max_steps or check that the tools give the model what it needs"
            )
            raise MaxStepsExceeded(msg)
        except BaseException as exc:
            self._emit(ErrorEvent(exc, self._call))
            raise
        finally:
            self._running = False
            self._workspace_material = None
            self._fail_pending_compactions()

    async def stream_events(self, message: Any = None) -> AsyncIterator[Event]:
        """Run one call and yield its events as they happen; the call's error is re-raised."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        task = asyncio.ensure_future(self.call(message))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                task.result()
                return
        finally:
            unsubscribe()
            if not task.done():
                task.cancel()

    def stop(self) -> None:
        """Stop the running call at its next step boundary (`CallStopped` is raised there)."""
        self._stop = True

    async def _boundary(self) -> None:
        if self._stop:
            msg = "the call was stopped; the conversation is kept and the next call continues it"
            raise CallStopped(msg)
        pending, self._pending_compactions = self._pending_compactions, []
        await self._run_pending(pending)

    async def _step(self) -> AssistantMessage | None:
        prep = await self._prepare("reasoning")
        response = await self._send(prep)
        self._append(response.message)
        if response.usage is not None and self.manifests:
            self.manifests[-1] = self.manifests[-1].with_usage(response.usage)
            self._previous = self.manifests[-1]
        self._emit(
            ModelResponseEvent(
                response.message,
                response.stop_reason,
                response.usage,
                prep.manifest.call_id,
                self._call,
            )
        )
        uses = response.message.tool_uses
        if not uses:
            self._emit(ReplyEvent(response.message, self._call))
            return response.message
        results = await self._run_tools(uses)
        self._append(UserMessage(content=tuple(results)))
        if any(u.name == TODO_TOOL for u in uses):
            self._shorten_old_receipts()
        return None

    async def _send(self, prep: Preparation) -> ModelResponse:
        def on_text(text: str) -> None:
            self._emit(TextDeltaEvent(text, self._call))

        self._last_request = prep.request
        try:
            return await self.model.request(prep.request, purpose="reasoning", on_text=on_text)
        except ContextOverflowError as overflow:
            # 000: a recognized overflow forces a smaller conversation and retries once.
            if not self._config.compaction.enabled:
                raise
            try:
                recovery = await self._prepare("recovery", force=True)
            except PreparationError as exc:
                raise overflow from exc
            if recovery.compaction is None:
                raise
            self._last_request = recovery.request
            return await self.model.request(recovery.request, purpose="recovery", on_text=on_text)

    # -- preparation --------------------------------------------------------------------------

    async def load_materials(self, purpose: Purpose = "reasoning", call_id: str = "") -> Materials:
        """The material of a request: System parts, task state, workspace material, sources.

        Sources are loaded here (once per preparation; never for summary preparations).
        """
        workspace = self._workspace_material
        if workspace is None:
            workspace = await asyncio.to_thread(load_workspace, self.workspace)
        system: list[SystemPart] = []
        if self.system_prompt:
            system.append(SystemPart("system_prompt", self.system_prompt))
        system.extend(SystemPart(f"instruction/{n}", t) for n, t in self.instructions.items())
        system.extend(workspace[0])
        blocks: list[Material] = list(workspace[1])
        failures: list[tuple[str, str]] = []
        if purpose != "summary" and self.sources:
            request = ContextRequest(self.agent_id, self.user_id, self.session_id, call_id, purpose)
            loaded, failures = await load_sources(list(self.sources.values()), request)
            blocks.extend(loaded)
        return Materials(system=tuple(system), blocks=tuple(blocks), failures=tuple(failures))

    def tool_schemas(self, config: ContextConfig | None = None) -> tuple[ToolSchema, ...]:
        """The tool schemas of the next request (CompressContext when enabled)."""
        config = config or self._config
        schemas = [t.schema for t in self.tools.values()]
        if self._todo_enabled:
            schemas.append(_TODO_SCHEMA)
        if self.task_options.allow_requirement_proposals:
            schemas.append(_PROPOSE_SCHEMA)
        if config.compression_tool_enabled:
            schemas.append(_COMPRESS_SCHEMA)
        return tuple(schemas)

    async def _summarize(self, request: SummaryRequest) -> Mapping[str, Any]:
        return await self.model.summarize(request, context=self._last_request)

    async def _prepare(
        self,
        purpose: Purpose,
        *,
        config: ContextConfig | None = None,
        force: bool = False,
        threshold: int | None = None,
        instructions: str | None = None,
        kind: CompactionKind | None = None,
    ) -> Preparation:
        config = config or self._config
        call_id = uuid.uuid4().hex[:16]
        try:
            materials = await self.load_materials(purpose, call_id)
        except (SourceUnavailable, SourceError) as exc:
            exc.manifest = ContextManifest(
                call_id=call_id,
                purpose=purpose,
                model=self.model.name,
                estimated_input_tokens=-1,
                input_limit=-1,
                counting_method="unavailable",
                exact=False,
                items=(),
                transforms=(),
                validation="build_failed",
                error=str(exc),
            )
            self.manifests.append(exc.manifest)
            self._emit(ContextBuildEvent(exc.manifest, self._call))
            raise
        try:
            prep = await prepare(
                self._state,
                context_window=self.model.context_window,
                counter=self._cache,
                config=config,
                materials=materials,
                call_id=call_id,
                projection=self.project_task,
                tools=self.tool_schemas(config),
                summarizer=self._summarize,
                offloader=self.offloader,
                purpose=purpose,
                model=self.model.name,
                previous=self._previous,
                force_compaction=force,
                compaction_threshold=threshold,
                instructions=instructions,
            )
        except PreparationError as exc:
            if exc.manifest is not None:
                self.manifests.append(exc.manifest)
                self._emit(ContextBuildEvent(exc.manifest, self._call))
            raise
        self.manifests.append(prep.manifest)
        if purpose != "compaction":
            self._previous = prep.manifest
        self._emit(ContextBuildEvent(prep.manifest, self._call, prep.request))
        # Validation passed: commit the candidate state (compacted, truncated) before sending.
        self._state = prep.state
        if prep.compaction is not None:
            if prep.compaction.kind == "truncation":
                kind = "fallback"
            elif kind is None:
                kind = {"reasoning": "automatic", "recovery": "overflow"}.get(purpose, "manual")  # type: ignore[assignment]
            self._emit(CompactionEvent(kind or "manual", prep.compaction, self._call))
        return prep

    # -- compression --------------------------------------------------------------------------

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
        if context_config is not None and not isinstance(context_config, ContextConfig):
            msg = f"context_config must be a ContextConfig, got {type(context_config).__name__}"
            raise UsageError(msg)
        hint = instructions.hint if isinstance(instructions, HintBlock) else instructions
        if self._running:
            future: asyncio.Future[CompactionRecord | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._pending_compactions.append((context_config, hint, force, future))
            return await future
        return await self._compress(context_config, hint, force)

    async def _compress(
        self, config: ContextConfig | None, hint: str | None, force: bool = False
    ) -> CompactionRecord | None:
        if not self._state.conversation:
            return None
        before = self._state
        prep = await self._prepare("compaction", config=config, instructions=hint, force=force)
        if prep.compaction is None:
            self._state = before  # light passes alone do not make a compression
        return prep.compaction

    def _fail_pending_compactions(self) -> None:
        # The call ended before another boundary: the queued compressions run now, after it.
        pending, self._pending_compactions = self._pending_compactions, []
        if pending:
            self._background = asyncio.ensure_future(self._run_pending(pending))

    async def _run_pending(
        self,
        pending: list[
            tuple[ContextConfig | None, str | None, bool, asyncio.Future[CompactionRecord | None]]
        ],
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
        before = self._state
        try:
            prep = await self._prepare(
                "compaction",
                config=strict,
                threshold=lines["notice_tokens"],
                instructions=hint if isinstance(hint, str) else None,
                kind="agentic",
            )
        except CompressionError as exc:
            return ToolResultBlock(
                tool_use_id=use.id,
                content=f"Compression failed; the context is unchanged. {exc}",
                is_error=True,
            )
        record = prep.compaction
        if record is None:
            self._state = before
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

    # -- tools --------------------------------------------------------------------------------

    async def _decide(self, use: ToolUseBlock) -> tuple[Literal["allow", "deny"], str]:
        if use.name == COMPRESS_TOOL or self.permission is None:
            return "allow", ""
        tool = self.tools.get(use.name)
        if tool is not None and tool.always_allowed:
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

    async def _run_tools(self, uses: Sequence[ToolUseBlock]) -> list[ToolResultBlock]:
        decisions = [await self._decide(use) for use in uses]
        for use, (decision, _) in zip(uses, decisions, strict=True):
            self._emit(ToolCallEvent(use, decision, self._call))

        async def run(use: ToolUseBlock, decision: str, reason: str) -> ToolResultBlock:
            loop = asyncio.get_running_loop()
            start = loop.time()
            if decision == "deny":
                result = ToolResultBlock(
                    tool_use_id=use.id,
                    content=f"Permission denied for {use.name}: {reason or 'denied'}.",
                    is_error=True,
                )
            elif use.name == COMPRESS_TOOL and self._config.compression_tool_enabled:
                result = await self._compress_tool(use)
            elif use.name == TODO_TOOL and self._todo_enabled:
                result = self._todo_write(use)
            elif use.name == PROPOSE_TOOL and self.task_options.allow_requirement_proposals:
                result = self._propose_tool(use)
            elif use.name in self.tools:
                result = await self.tools[use.name].run(use.id, use.input)
            else:
                known = ", ".join(sorted(self.tools)) or "none"
                result = ToolResultBlock(
                    tool_use_id=use.id,
                    content=f"There is no tool named {use.name!r}. Available tools: {known}.",
                    is_error=True,
                )
            self._emit(ToolResultEvent(use, result, loop.time() - start, self._call))
            return result

        # Compression changes the working state, so it runs after the other (parallel) calls.
        others = [
            (i, u, d)
            for i, (u, d) in enumerate(zip(uses, decisions, strict=True))
            if u.name != COMPRESS_TOOL
        ]
        results: list[ToolResultBlock | None] = [None] * len(uses)
        outputs = await asyncio.gather(*(run(u, d, r) for _, u, (d, r) in others))
        for (i, _, _), output in zip(others, outputs, strict=True):
            results[i] = output
        for i, use in enumerate(uses):
            if results[i] is None:
                results[i] = await run(use, *decisions[i])
        return [r for r in results if r is not None]

    # -- sources, instructions, task state -------------------------------------------------

    def context_source(
        self,
        name: str,
        source: Any,
        *,
        timeout: float = 5.0,
        on_failure: FailurePolicy = "fail",
    ) -> SourceRegistration:
        """Register a source read before every reasoning request (not at construction).

        ``source`` is a `ContextSource` (async ``load(request)``) or an async callable taking a
        `ContextRequest` and returning a list of `ContextBlock`. Manifest ids are
        ``source/<name>/<block id>``.
        """
        validate_source_name(name)
        if name in self.sources:
            msg = f"a source named {name!r} is already registered; names must be unique"
            raise UsageError(msg)
        registration = SourceRegistration(name, source, timeout=timeout, on_failure=on_failure)
        self.sources[name] = registration
        return registration

    def remove_source(self, name: str) -> None:
        """Unregister a source."""
        if self.sources.pop(name, None) is None:
            msg = f"no source named {name!r}; registered: {', '.join(self.sources) or 'none'}"
            raise UsageError(msg)

    def instruction(self, name: str, text: str) -> None:
        """Add (or replace) a named instruction, placed in System as ``system/instruction/<name>``."""
        validate_source_name(name)
        self.instructions[name] = text

    def enable_task_list(self) -> None:
        """Give the model the ``todo_write`` tool; the current list is projected every step."""
        self._todo_enabled = True

    def task_context(
        self,
        *,
        include_requirements: bool = False,
        include_verification_results: bool = False,
        allow_requirement_proposals: bool = False,
    ) -> None:
        """Choose the optional task projections (replaces the previous choice)."""
        self.task_options = TaskOptions(
            include_requirements=include_requirements,
            include_verification_results=include_verification_results,
            allow_requirement_proposals=allow_requirement_proposals,
        )

    def begin_task(self, scope: str, objective: str) -> None:
        """Set the task's identity and objective."""
        self.task = self.task.begin(scope, objective)

    def propose_requirement(self, text: str) -> str:
        """Add a proposed requirement; returns its id."""
        self.task, requirement = self.task.propose(text)
        return requirement.id

    def decide_requirement(
        self, requirement_id: str, *, accept: bool, expected_revision: int
    ) -> None:
        """Confirm or reject a requirement; `StateConflict` when the state moved on."""
        self.task = self.task.decide(
            requirement_id, accept=accept, expected_revision=expected_revision
        )

    def set_subject_version(self, version: str) -> None:
        """Record which version of the subject checks refer to."""
        self.task = self.task.with_subject_version(version)

    def invalidate_subject(self) -> None:
        """Mark the subject as changed: earlier verification results become stale."""
        self.task = self.task.with_subject_version(None)

    def record_verification(self, name: str, *, passed: bool, summary: str = "") -> None:
        """Store a verification result against the current subject version."""
        self.task = self.task.with_verification(
            Verification(
                name=name, passed=passed, summary=summary, subject_version=self.task.subject_version
            )
        )

    def _todo_write(self, use: ToolUseBlock) -> ToolResultBlock:
        try:
            todos = [TodoItem.model_validate(t) for t in use.input.get("todos", [])]
        except Exception as exc:
            return ToolResultBlock(
                tool_use_id=use.id, content=f"Invalid todo list: {exc}", is_error=True
            )
        self.task = self.task.with_todos(todos)
        return ToolResultBlock(tool_use_id=use.id, content=self._receipt())

    def _propose_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        text = use.input.get("text")
        if not isinstance(text, str) or not text.strip():
            return ToolResultBlock(
                tool_use_id=use.id, content="Give the requirement's text.", is_error=True
            )
        requirement_id = self.propose_requirement(text)
        return ToolResultBlock(
            tool_use_id=use.id, content=f"Proposed {requirement_id}; the user will decide."
        )

    def _receipt(self) -> str:
        return _RECEIPT.format(revision=self.task.revision, todos=self.task.render_todos())

    def project_task(self, conversation: Sequence[Message]) -> list[Material]:
        """The ``TASK_STATE`` material for a request whose conversation is ``conversation``."""
        text = self.task.render(
            self.task_options, include_todos=not self._receipt_visible(conversation)
        )
        if not text:
            return []
        block = ContextBlock.runtime("task_state", text)
        return [Material("task/state", "task", "task", block, tag="TASK_STATE")]

    def _receipt_visible(self, conversation: Sequence[Message]) -> bool:
        # 000: the current receipt is used while it is visible and whole; otherwise the list is
        # reconstructed from state.
        if not self.task.todos:
            return True
        expected = self._receipt()
        for message in reversed(conversation):
            if isinstance(message, UserMessage):
                for result in message.tool_results:
                    if result.text.startswith("Todo list updated (revision"):
                        return result.text == expected
        return False

    def _shorten_old_receipts(self) -> None:
        conversation = list(self._state.conversation)
        latest_seen = False
        changed = False
        for index in range(len(conversation) - 1, -1, -1):
            message = conversation[index]
            if not isinstance(message, UserMessage):
                continue
            content = list(message.content)
            for position, block in enumerate(content):
                if isinstance(block, ToolResultBlock) and block.text.startswith(
                    "Todo list updated (revision"
                ):
                    if latest_seen:
                        content[position] = block.evolve(content=_SHORTENED)
                        changed = True
                    latest_seen = True
            conversation[index] = UserMessage(content=tuple(content))
        if changed:
            self._state = WorkingState(
                conversation=tuple(conversation),
                summary=self._state.summary,
                revision=self._state.revision + 1,
            )

    # -- the session log ----------------------------------------------------------------------

    @property
    def session_key(self) -> SessionKey:
        """(agent id, user id, session id) in the session log."""
        return SessionKey(self.agent_id, self.user_id or "", self.session_id)

    def _resume(self) -> None:
        assert self.session_log is not None
        checkpoint = self.session_log.checkpoint(self.session_key)
        if checkpoint is None:
            return
        self._state = WorkingState.model_validate_json(checkpoint.state)
        self.task = TaskState.model_validate_json(checkpoint.task)
        self._history = [
            parse_messages([__import__("json").loads(p)])[0]
            for p in self.session_log.message_payloads(self.session_key)
        ]

    async def _commit_turn(self) -> None:
        if self.session_log is None:
            self._unlogged_messages.clear()
            return
        messages = [
            LoggedMessage(m.role, m.model_dump_json(), _plain_text(m))
            for m in self._unlogged_messages
        ]
        events = list(self._unlogged_events)
        state, task = self._state.model_dump_json(), self.task.model_dump_json()
        turn = await asyncio.to_thread(
            self.session_log.commit_turn,
            self.session_key,
            events=events,
            messages=messages,
            state=state,
            task=task,
        )
        self._unlogged_messages.clear()
        del self._unlogged_events[: len(events)]
        self._emit(TurnCommittedEvent(turn, len(messages), self._call))

    def _require_log(self) -> SessionLog:
        if self.session_log is None:
            msg = "this agent has no session log; pass session_log=... when building it"
            raise UsageError(msg)
        return self.session_log

    def session_list(self) -> Any:
        """This user's sessions of this agent, as a DataFrame."""
        return self._require_log().sessions(user_id=self.user_id or "", agent_id=self.agent_id)

    def session_history(self, session_id: str | None = None, last_n: int = 20) -> Any:
        """The last messages of a session of this user (this one by default), as a DataFrame."""
        key = SessionKey(self.agent_id, self.user_id or "", session_id or self.session_id)
        return self._require_log().history(key, last_n)

    def session_search(self, query: str, limit: int = 20) -> Any:
        """This user's messages with this agent matching ``query`` (full-text), as a DataFrame."""
        return self._require_log().search(
            query, user_id=self.user_id or "", agent_id=self.agent_id, limit=limit
        )

    def enable_session_tools(self) -> None:
        """Give the model ``session_list``, ``session_history`` and ``session_search``."""
        self._require_log()
        agent = self

        def session_list() -> str:
            """List your earlier sessions with this user."""
            return str(agent.session_list().to_string(index=False))

        def session_history(session_id: str, last_n: int = 20) -> str:
            """Read the last messages of one of your sessions.

            Args:
                session_id: The session, from session_list.
                last_n: How many messages.
            """
            return str(agent.session_history(session_id, last_n).to_string(index=False))

        def session_search(query: str) -> str:
            """Search your conversations with this user for words.

            Args:
                query: Words to find.
            """
            found = agent.session_search(query)
            return found.to_string(index=False) if len(found) else f"nothing matches {query!r}"

        for fn in (session_list, session_history, session_search):
            self.add_tool(fn)

    # -- state --------------------------------------------------------------------------------

    def _append(self, message: UserMessage | AssistantMessage) -> None:
        self._history.append(message)
        self._unlogged_messages.append(message)
        self._state = self._state.append(message)

    def _close_interrupted_calls(self) -> None:
        # A stopped or crashed call can leave tool calls without results; the provider would
        # reject the next request, so each gets an error result saying what happened.
        conversation = self._state.conversation
        if not conversation or not isinstance(conversation[-1], AssistantMessage):
            return
        uses = conversation[-1].tool_uses
        if uses:
            self._append(
                UserMessage(
                    content=tuple(
                        ToolResultBlock(
                            tool_use_id=u.id,
                            content="The call was interrupted before this tool ran.",
                            is_error=True,
                        )
                        for u in uses
                    )
                )
            )


def _plain_text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"{block.name} {block.input_json}")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text)
    return "\n".join(parts)
