"""`Agent`: the reasoning–tool–result loop with every request prepared by the pipeline. One
``await agent(message)`` is one *call* of one or more model *requests*. A thin facade over
collaborators that own their state (docs/architecture.md): `ConversationOwner`,
`MaterialLoader`, `TaskBoard`, `Compactor`, `ToolRunner`, `Recorder`, `Preparer`, `StepLoop`."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ctxlab.agent._builtins import BUILTIN_TOOLS, COMPRESS_SCHEMA
from ctxlab.agent._compactor import Compactor
from ctxlab.agent._conversation import ConversationOwner
from ctxlab.agent._copy import copy_agent
from ctxlab.agent._export import agent_transcript
from ctxlab.agent._facets import AgentLog, AgentTasks
from ctxlab.agent._html import agent_html
from ctxlab.agent._material_loader import MaterialLoader
from ctxlab.agent._preparer import Preparer
from ctxlab.agent._recorder import Recorder
from ctxlab.agent._runner import Approver, PermissionHook, ToolRunner
from ctxlab.agent._step import StepLoop, stream_call
from ctxlab.agent._taskboard import TaskBoard
from ctxlab.agent._tools import Tool
from ctxlab.agent._watched import Capabilities
from ctxlab.config._config import ContextConfig, require_config
from ctxlab.events import ErrorEvent, Event, Subscribers
from ctxlab.exceptions import AgentBusy, UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import ContextManifest, Thresholds
from ctxlab.materials import FailurePolicy, SourceRegistration
from ctxlab.messages import AssistantMessage, HintBlock
from ctxlab.messages._request import ToolSchema
from ctxlab.messages._state import WorkingState
from ctxlab.models import DemoModel, Model
from ctxlab.pipeline import CompactionRecord, Offloader, SelectionPolicy, WorkspaceOffloader
from ctxlab.session import SessionKey, SessionLog
from ctxlab.tokens import TokenCache, TokenCounter
from ctxlab.util._checks import shown
from ctxlab.util._path_args import path_argument

if TYPE_CHECKING:
    pass

__all__ = ["Agent", "Approver", "PermissionHook"]


_MOVED = {
    "task": ("tasks", "state"),
    "task_options": ("tasks", "options"),
    "set_mode": ("tasks", "set_mode"),
    "enable_mode_tool": ("tasks", "enable_mode_tool"),
    "enable_task_list": ("tasks", "enable_list"),
    "task_context": ("tasks", "context"),
    "begin_task": ("tasks", "begin"),
    "propose_requirement": ("tasks", "propose_requirement"),
    "decide_requirement": ("tasks", "decide_requirement"),
    "set_subject_version": ("tasks", "set_subject_version"),
    "invalidate_subject": ("tasks", "invalidate_subject"),
    "record_verification": ("tasks", "record_verification"),
    "project_task": ("tasks", "project"),
    "session_log": ("log", "store"),
    "session_key": ("log", "key"),
    "session_list": ("log", "sessions"),
    "session_history": ("log", "history"),
    "session_search": ("log", "search"),
    "enable_session_tools": ("log", "enable_tools"),
}
"""Agent members before 0.3 → (facet, its name): kept working, with a DeprecationWarning."""


class Agent:
    """A tool-using agent whose every model request is assembled by ctxlab's pipeline.

    Args:
        name: The agent's name (also its default agent id).
        system_prompt: Persistent behaviour; the first part of the System message.
        model: The model; the offline `DemoModel` when omitted.
        tools: Plain typed functions or `Tool` objects.
        context_config: The `ContextConfig` (defaults otherwise); replaceable between steps.
        workspace: A folder for offloaded tool results and images, and workspace material.
        permission: A hook deciding each tool call: allow, deny or ask.
        approver: Answers the calls the hook sent to "ask"; without one they are denied.
        counter: The token counter for estimates; the model's when omitted.
        max_steps: Reasoning requests allowed in one call before `MaxStepsExceeded`.
        agent_id: The agent's id in the session log and for sources (the name by default).
        user_id: The user the session belongs to (sessions are never shared across users).
        session_id: The session; a new id by default. With a session log holding committed
            turns of (agent id, user id, session id), the agent resumes that working state.
        session_log: A `SessionLog` or the path of its SQLite file.
        summary_model: A separate model for summaries (000); the agent's model by default.
        selection_policy: The omission order of optional material (000's contextSelectionPolicy).
    """

    capabilities: ClassVar[Capabilities] = Capabilities()
    """What a Lab can do with it: everything (send, compact, stop; a config applies at the
    next request)."""

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
        summary_model: Model | None = None,
        selection_policy: SelectionPolicy | None = None,
    ) -> None:
        model = _checked_model(model, tools)
        self.name = name
        self.model = model
        self.summary_model = summary_model or model
        self._config = require_config(context_config) if context_config else ContextConfig()
        self.workspace = (
            path_argument(workspace, "workspace", what="a folder")
            if workspace is not None
            else None
        )
        self.offloader: Offloader | None = (
            WorkspaceOffloader(self.workspace) if self.workspace is not None else None
        )
        self.max_steps = max_steps
        self.agent_id = agent_id or name
        self.user_id = user_id
        self.session_id = session_id or uuid.uuid4().hex
        self.tools: dict[str, Tool] = {}
        self._subscribers = Subscribers()
        self._running = False
        self._call = ""
        self._conversation = ConversationOwner()
        self._materials = MaterialLoader(system_prompt, self.workspace, selection_policy)
        self._tasks = TaskBoard()
        self._task_facet = AgentTasks(self._tasks)
        self._runner = ToolRunner(self.tools, self._emit, permission=permission, approver=approver)
        self._preparer = Preparer(self, TokenCache(counter or model.counter))
        self._compactor = Compactor(self._preparer.compact)
        self._loop = StepLoop(self)
        log_ = (
            session_log if isinstance(session_log, SessionLog | None) else SessionLog(session_log)
        )
        self._recorder = Recorder(log_, SessionKey(self.agent_id, user_id or "", self.session_id))
        self._log_facet = AgentLog(self._recorder, self.add_tool)
        for item in tools:
            self.add_tool(item)
        self._preparer.require_room(self._config)
        self._resume()

    def _resume(self) -> None:
        """Take the session's committed turns from its log, when it has some."""
        resumed = self._recorder.resume()
        if resumed is not None:
            self._tasks.state = resumed.task
            self._conversation.commit(resumed.state, history=resumed.history)
            self._preparer.manifests.extend(resumed.manifests)

    # -- inspection ---------------------------------------------------------------------------

    @property
    def context(self) -> WorkingState:
        """The working state the next request is prepared from (conversation and summary)."""
        return self._conversation.state

    @property
    def history(self) -> tuple[Any, ...]:
        """Every message of the session, uncompacted: the durable record."""
        return self._conversation.history

    @property
    def manifests(self) -> list[ContextManifest]:
        """Every preparation's manifest, in order (provider usage added once known)."""
        return self._preparer.manifests

    @property
    def context_config(self) -> ContextConfig:
        """The config in force; a new one applies from the next preparation."""
        return self._config

    @context_config.setter
    def context_config(self, config: ContextConfig) -> None:
        self._config = self._preparer.require_room(require_config(config))

    @property
    def running(self) -> bool:
        """True while a call is in progress."""
        return self._running

    @property
    def token_cache(self) -> TokenCache:
        """The agent's token cache (counts by content hash)."""
        return self._preparer.cache

    def add_tool(self, item: Callable[..., Any] | Tool) -> Tool:
        """Register a tool (a typed function or a `Tool`); names must be unique."""
        made = item if isinstance(item, Tool) else Tool.from_function(item)
        if made.name in self.tools or made.name in BUILTIN_TOOLS:
            msg = f"a tool named {made.name!r} is already registered; rename one of them"
            raise UsageError(msg)
        self.tools[made.name] = made
        return made

    def copy(self, **overrides: Any) -> Agent:
        """A new agent from this point, e.g. ``agent.copy(context_config=other)``; `copy_agent`."""
        return copy_agent(self, **overrides)

    def transcript(self) -> Transcript:
        """This session as a `Transcript`: history, system prompt, tools, usage per step."""
        return agent_transcript(self)

    def tool_schemas(self, config: ContextConfig | None = None) -> tuple[ToolSchema, ...]:
        """The tool schemas of the next request (CompressContext when enabled)."""
        config = self._config if config is None else require_config(config)
        schemas = [t.schema for t in self.tools.values()]
        schemas.extend(self._tasks.schemas())
        if config.compression_tool_enabled:
            schemas.append(COMPRESS_SCHEMA)
        return tuple(schemas)

    # -- events -------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns the function that unsubscribes."""
        return self._subscribers.subscribe(callback)

    def _emit(self, event: Event) -> None:
        self._recorder.record(event)
        self._subscribers.emit(event)

    # -- calls --------------------------------------------------------------------------------

    async def __call__(self, message: Any = None) -> AssistantMessage:
        """Run one call; see `call`."""
        return await self.call(message)

    async def call(self, message: Any = None) -> AssistantMessage:
        """Add ``message`` and run the loop until the model replies without tool calls.

        Returns the reply. Raises `PreparationError` subclasses, `ModelError` subclasses,
        `InvalidConversation` (a reply or message that would break the conversation: nothing of
        it is kept), `MaxStepsExceeded` or `CallStopped`; an ``error`` event precedes each.
        """
        if self._running:
            msg = "the agent is already running a call; await it or call agent.stop() first"
            raise AgentBusy(msg)
        self._running = True
        self._call = uuid.uuid4().hex[:12]
        try:
            return await self._loop.run(message)
        except BaseException as exc:
            self._emit(ErrorEvent(exc, self._call))
            raise
        finally:
            self._running = False
            self._materials.end_call()
            self._compactor.after_call()

    def stream_events(self, message: Any = None) -> AsyncIterator[Event]:
        """Run one call and yield its events as they happen; the call's error is re-raised."""
        return stream_call(self, message)

    def stop(self) -> None:
        """Stop the running call at its next step boundary (`CallStopped` is raised there)."""
        self._loop.stop_requested = True

    # -- compression (002) --------------------------------------------------------------------

    async def compress_context(
        self,
        context_config: ContextConfig | None = None,
        instructions: HintBlock | str | None = None,
        *,
        force: bool = False,
    ) -> CompactionRecord | None:
        """Compress the working context now if it is above the trigger (a no-op below it; 002).

        ``context_config`` overrides the config once; ``instructions`` guide the summary. Returns
        the record, or None (nothing changed, no event); while a call runs, waits for its next
        step boundary. ``force=True`` compacts whatever the size ("Compact now").
        """
        if context_config is not None:
            require_config(context_config)
        hint = instructions.hint if isinstance(instructions, HintBlock) else instructions
        return await self._compactor.compress(context_config, hint, force, running=self._running)

    def next_thresholds(self) -> Thresholds:
        """The token lines (usage notice, trigger, input limit, ...) of the next request."""
        return self._preparer.next_thresholds()

    def repair_context(self) -> list[str]:
        """Make a broken stored working state valid; returns what changed (the log keeps all)."""
        return self._conversation.repair()

    # -- material: sources and instructions (000) ----------------------------------------------

    @property
    def system_prompt(self) -> str:
        """Persistent behaviour; the first part of the System message."""
        return self._materials.system_prompt

    @system_prompt.setter
    def system_prompt(self, text: str) -> None:
        self._materials.system_prompt = text

    @property
    def sources(self) -> dict[str, SourceRegistration]:
        """Registered context sources by name (their options can be edited between steps)."""
        return self._materials.sources

    @property
    def instructions(self) -> dict[str, str]:
        """Named instructions, placed in System after the system prompt."""
        return self._materials.instructions

    def context_source(
        self, name: str, source: Any, *, timeout: float = 5.0, on_failure: FailurePolicy = "fail"
    ) -> SourceRegistration:
        """Register a source read before every reasoning request: a `ContextSource` or an async
        callable taking a `ContextRequest`, returning `ContextBlock`s (ids ``source/<name>/…``)."""
        return self._materials.add_source(name, source, timeout=timeout, on_failure=on_failure)

    def instruction(self, name: str, text: str) -> None:
        """Add (or replace) a named instruction, placed in System as ``system/instruction/<name>``."""
        self._materials.add_instruction(name, text)

    # -- task state and session log: facets of their own ----------------------------------

    @property
    def tasks(self) -> AgentTasks:
        """The task state (todo list, requirements, verification, PLAN/BUILD mode) and what
        steers it: ``agent.tasks.state``, ``agent.tasks.enable_list()``, ..."""
        return self._task_facet

    @property
    def log(self) -> AgentLog:
        """The session log and its queries: ``agent.log.store``, ``agent.log.search(...)``."""
        return self._log_facet

    def __getattr__(self, name: str) -> Any:
        # The names the task state and the session log had on the agent itself (one release).
        moved = _MOVED.get(name)
        if moved is None:
            msg = f"{type(self).__name__!r} object has no attribute {name!r}"
            raise AttributeError(msg)
        facet, attribute = moved
        warnings.warn(
            f"Agent.{name} moved to Agent.{facet}.{attribute}", DeprecationWarning, stacklevel=2
        )
        return getattr(getattr(self, facet), attribute)

    def _repr_html_(self) -> str:
        """The agent at a glance, as static HTML (what a notebook shows without a kernel)."""
        return agent_html(self)


def _checked_model(model: Model | None, tools: Any) -> Model:
    """The agent's model (`DemoModel` when none), refusing what is not a model, and tools that
    are not a list."""
    if model is None:
        model = DemoModel()
    if not isinstance(model, Model):
        msg = f"model must be a ctxlab Model (AnthropicModel, DemoModel, ...), got {model!r}"
        raise UsageError(msg)
    if isinstance(tools, str | bytes) or not isinstance(tools, Iterable):
        msg = f"tools must be a list of typed functions or Tools, got {shown(tools)}"
        raise UsageError(msg)
    return model
