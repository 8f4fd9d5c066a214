"""`Recorder`: the agent's side of the session log — what each event leaves in it, committing
turns, resuming, and the session queries (and the tools that expose them to the model)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxlab.events import (
    CompactionEvent,
    ContextBuildEvent,
    ErrorEvent,
    Event,
    ModelResponseEvent,
    ToolResultEvent,
)
from ctxlab.exceptions import UsageError
from ctxlab.manifest import ContextManifest
from ctxlab.materials._tasks import TaskState
from ctxlab.messages import (
    Message,
    ProviderUsage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    parse_messages,
)
from ctxlab.messages._state import WorkingState
from ctxlab.session import LoggedMessage, SessionKey, SessionLog

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Recorder", "Resumed", "log_record"]


def log_record(event: Event) -> tuple[str, dict[str, Any]] | None:
    """What the session log keeps of an event (messages are logged on their own)."""
    if isinstance(event, ContextBuildEvent):
        return "context_build", {"context_manifest": event.manifest.to_dict()}
    if isinstance(event, CompactionEvent):
        return "compaction", {
            "trigger": event.trigger,
            "kind": event.kind,
            **dataclasses.asdict(event.record),  # with ``asked``, the rule that asked (or None)
        }
    if isinstance(event, ModelResponseEvent):
        usage = dataclasses.asdict(event.usage) if event.usage else None
        return "model_response", {
            "request_id": event.request_id,
            "stop": event.stop_reason,
            "usage": usage,
            "from_cache": event.from_cache,
            "retries": [dataclasses.asdict(r) for r in event.retries],
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


@dataclasses.dataclass(frozen=True)
class Resumed:
    """A session's committed state, read back from the log."""

    state: WorkingState
    task: TaskState
    history: list[Message]
    manifests: list[ContextManifest] = dataclasses.field(default_factory=list)
    """The manifests of its past preparations, provider usage attached."""


class Recorder:
    """Writes an agent's turns to its session log (when it has one) and reads them back."""

    def __init__(self, log: SessionLog | None, key: SessionKey) -> None:
        self.log = log
        self.key = key
        self._events: list[tuple[str, dict[str, Any]]] = []
        self.turns = 0
        """The committed turns this agent knows of (read at resume, counted at each commit):
        the log refuses a commit when another writer added turns since."""

    def record(self, event: Event) -> None:
        """Keep what the log stores of ``event`` until the turn is committed."""
        if self.log is not None:
            entry = log_record(event)
            if entry is not None:
                self._events.append(entry)

    def record_usage(self, request_id: str, usage: ProviderUsage) -> None:
        """Keep the usage billed for a request that has no `ModelResponseEvent` of its own (a
        summary call), so that a resumed session's manifests carry it as the live one's did."""
        if self.log is not None:
            entry = {"request_id": request_id, "usage": dataclasses.asdict(usage)}
            self._events.append(("summary_usage", entry))

    def resume(self) -> Resumed | None:
        """The last committed state of this session, or None for a new session."""
        if self.log is None:
            return None
        checkpoint = self.log.checkpoint(self.key)
        if checkpoint is None:
            return None
        self.turns = int(checkpoint.turn)
        payloads = self.log.message_payloads(self.key)
        return Resumed(
            state=WorkingState.model_validate_json(checkpoint.state),
            task=TaskState.model_validate_json(checkpoint.task),
            history=parse_messages(json.loads(p) for p in payloads),
            manifests=self._past_manifests(),
        )

    def _past_manifests(self) -> list[ContextManifest]:
        # The log keeps each manifest as it was built and the usage in the response event that
        # followed; a manifest that cannot be read back is skipped, never a failed resume.
        assert self.log is not None
        manifests: list[ContextManifest] = []
        by_id: dict[str, int] = {}
        kinds = ("context_build", "model_response", "summary_usage")
        for kind, payload in self.log.event_payloads(self.key, kinds):
            try:
                if kind == "context_build":
                    manifest = ContextManifest.from_dict(payload["context_manifest"])
                    by_id[manifest.request_id] = len(manifests)
                    manifests.append(manifest)
                elif payload.get("usage"):
                    index = by_id[payload.get("request_id") or payload.get("call_id")]
                    manifests[index] = manifests[index].with_usage(
                        ProviderUsage(**payload["usage"])
                    )
            except (KeyError, TypeError, ValueError):
                continue
        return manifests

    async def commit_turn(
        self, messages: list[Message], state: WorkingState, task: TaskState
    ) -> int | None:
        """One transaction: the turn's events and messages, and a checkpoint of the state.
        Returns the turn number (None without a log)."""
        if self.log is None:
            return None
        logged = [LoggedMessage(m.role, m.model_dump_json(), _plain_text(m)) for m in messages]
        events = list(self._events)
        turn = await asyncio.to_thread(
            self.log.commit_turn,
            self.key,
            events=events,
            messages=logged,
            state=state.model_dump_json(),
            task=task.model_dump_json(),
            expected_turns=self.turns,
        )
        self.turns = turn
        del self._events[: len(events)]
        return turn

    def commit_start(
        self,
        messages: list[Message],
        state: WorkingState,
        task: TaskState,
        event: tuple[str, dict[str, Any]],
    ) -> int | None:
        """The first turn of a session that starts from another's (a fork): the messages it
        starts with, one event saying where they came from, and a checkpoint of the state.
        Only on a new session (None without a log)."""
        if self.log is None:
            return None
        logged = [LoggedMessage(m.role, m.model_dump_json(), _plain_text(m)) for m in messages]
        turn = self.log.commit_turn(
            self.key,
            events=[event],
            messages=logged,
            state=state.model_dump_json(),
            task=task.model_dump_json(),
            expected_turns=0,
        )
        self.turns = turn
        return turn

    def require_log(self) -> SessionLog:
        """The log; a `UsageError` naming the fix when there is none."""
        if self.log is None:
            msg = "this agent has no session log; pass session_log=... when building it"
            raise UsageError(msg)
        return self.log

    def sessions(self) -> pd.DataFrame:
        """This user's sessions of this agent."""
        return self.require_log().sessions(user_id=self.key.user_id, agent_id=self.key.agent_id)

    def history(self, session_id: str | None, last_n: int) -> pd.DataFrame:
        """The last messages of a session of this user (this one by default)."""
        key = SessionKey(self.key.agent_id, self.key.user_id, session_id or self.key.session_id)
        return self.require_log().history(key, last_n)

    def search(self, query: str, limit: int) -> pd.DataFrame:
        """This user's messages with this agent matching ``query`` (full-text)."""
        return self.require_log().search(
            query, user_id=self.key.user_id, agent_id=self.key.agent_id, limit=limit
        )

    def session_tools(self, agent: Any) -> list[Callable[..., str]]:
        """``session_list``, ``session_history`` and ``session_search`` as tools over ``agent``
        (an agent's `AgentLog`)."""
        self.require_log()

        def session_list() -> str:
            """List your earlier sessions with this user."""
            return str(agent.sessions().to_string(index=False))

        def session_history(session_id: str, last_n: int = 20) -> str:
            """Read the last messages of one of your sessions.

            Args:
                session_id: The session, from session_list.
                last_n: How many messages.
            """
            return str(agent.history(session_id, last_n).to_string(index=False))

        def session_search(query: str) -> str:
            """Search your conversations with this user for words.

            Args:
                query: Words to find.
            """
            found = agent.search(query)
            return found.to_string(index=False) if len(found) else f"nothing matches {query!r}"

        return [session_list, session_history, session_search]


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
