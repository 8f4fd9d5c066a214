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
import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ctxlab._config import ContextConfig, require_config
from ctxlab._request import ModelRequest, ToolSchema
from ctxlab._state import WorkingState
from ctxlab._tasks import TaskOptions, TaskState
from ctxlab.agent._builtins import (
    COMPRESS_SCHEMA,
    COMPRESS_TOOL,
    PROPOSE_SCHEMA,
    PROPOSE_TOOL,
    TODO_SCHEMA,
    TODO_TOOL,
)
from ctxlab.agent._compression import CompressionMixin
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
)
from ctxlab.agent._harness import HarnessMixin
from ctxlab.agent._recording import SessionMixin, log_record
from ctxlab.agent._tools import Tool
from ctxlab.exceptions import (
    AgentBusy,
    CallStopped,
    ContextOverflowError,
    MaxStepsExceeded,
    PreparationError,
    UsageError,
)
from ctxlab.manifest import ContextManifest
from ctxlab.materials import Material, SourceRegistration, SystemPart, load_workspace
from ctxlab.messages import (
    AssistantMessage,
    Message,
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
from ctxlab.session import SessionLog
from ctxlab.tokens import TokenCache, TokenCounter

__all__ = ["Agent", "Approver", "PermissionHook"]

log = logging.getLogger("ctxlab.agent")

Decision = Literal["allow", "deny", "ask"]
PermissionHook = Callable[
    [ToolUseBlock], Decision | tuple[Decision, str] | Awaitable[Decision | tuple[Decision, str]]
]
"""Decides a tool call: ``"allow"``, ``"deny"`` or ``"ask"`` (optionally with a reason)."""
Approver = Callable[[ToolUseBlock], bool | Awaitable[bool]]
"""Answers the calls a permission hook sent to ``"ask"``: True runs the tool."""


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


class Agent(HarnessMixin, CompressionMixin, SessionMixin):
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
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self._config = require_config(context_config) if context_config else ContextConfig()
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
        self._config = require_config(config)

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
            record = log_record(event)
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
            self._run_pending_after_call()

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

    def tool_schemas(self, config: ContextConfig | None = None) -> tuple[ToolSchema, ...]:
        """The tool schemas of the next request (CompressContext when enabled)."""
        config = config or self._config
        schemas = [t.schema for t in self.tools.values()]
        if self._todo_enabled:
            schemas.append(TODO_SCHEMA)
        if self.task_options.allow_requirement_proposals:
            schemas.append(PROPOSE_SCHEMA)
        if config.compression_tool_enabled:
            schemas.append(COMPRESS_SCHEMA)
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
            if exc.manifest is None:
                # Failed before any counting (a source): 000's "no statistics" manifest.
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
        parallel = [i for i, use in enumerate(uses) if use.name != COMPRESS_TOOL]
        outputs = await asyncio.gather(*(run(uses[i], *decisions[i]) for i in parallel))
        results = dict(zip(parallel, outputs, strict=True))
        for i, use in enumerate(uses):
            if i not in results:
                results[i] = await run(use, *decisions[i])
        return [results[i] for i in range(len(uses))]

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
