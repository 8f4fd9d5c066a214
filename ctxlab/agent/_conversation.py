"""`ConversationOwner`: the one owner of the agent's working state and durable history.

Every change of the working state goes through `ConversationOwner.commit`, which refuses —
before anything is stored or logged — a message that would make the conversation invalid. The
pipeline validates whole requests; this validates each message as it arrives, so one bad model
reply or user message can never poison every later call of the agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.exceptions import InvalidConversation, StateChanged
from ctxlab.messages import (
    AssistantMessage,
    Message,
    ToolPairProblem,
    ToolPairScanner,
    UserMessage,
    repair_conversation,
)
from ctxlab.messages._state import WorkingState

__all__ = ["ConversationOwner"]

Conversation = tuple[UserMessage | AssistantMessage, ...]


class ConversationOwner:
    """Holds the working state (what the model sees, compacted) and the durable history (every
    message, uncompacted), plus the messages not yet written to the session log."""

    def __init__(self) -> None:
        self._state = WorkingState()
        self._history: list[Message] = []
        self._unlogged: list[Message] = []
        # The pair scan of the committed conversation, extended by each appended message; rebuilt
        # on demand after a commit that rewrote the conversation (a compaction).
        self._scanner: ToolPairScanner | None = ToolPairScanner()

    @property
    def state(self) -> WorkingState:
        """The committed working state."""
        return self._state

    @property
    def history(self) -> tuple[Message, ...]:
        """Every message of the session, in order."""
        return tuple(self._history)

    def history_since(self, start: int) -> tuple[Message, ...]:
        """The messages of the history from index ``start`` on. Only they are copied: a reader
        that keeps its place reads what is new at each step, not the whole history again."""
        return tuple(self._history[start:])

    @property
    def history_length(self) -> int:
        """How many messages the durable history holds (without copying it)."""
        return len(self._history)

    def take_unlogged(self) -> list[Message]:
        """The messages appended since the last call (for the session log), now handed over."""
        taken, self._unlogged = self._unlogged, []
        return taken

    def append(self, message: UserMessage | AssistantMessage) -> None:
        """Append ``message`` to state and history; `InvalidConversation` if it would break the
        conversation (then nothing changes)."""
        self.commit(self._state.append(message), appended=(message,))

    def commit(
        self,
        candidate: WorkingState,
        *,
        appended: Sequence[UserMessage | AssistantMessage] = (),
        history: Sequence[Message] | None = None,
        base: WorkingState | None = None,
    ) -> None:
        """Make ``candidate`` the working state — the only place it changes.

        ``appended`` are new messages at the end of ``candidate`` (they join the durable history
        and are checked first); ``history`` replaces the durable history (a resumed session).
        Without ``appended`` the candidate is a prepared state the pipeline already validated;
        ``base`` is the state it was prepared from: if another commit came first, `StateChanged`
        is raised and nothing changes (the candidate would silently undo that commit).
        """
        if base is not None and base is not self._state:
            msg = (
                "the working state changed while this request was prepared (another compaction "
                "or a new message was committed first); nothing of it was kept, prepare again"
            )
            raise StateChanged(msg)
        scanner = self._scanner
        if appended:
            scanner = self._check(appended)
        elif candidate.conversation is not self._state.conversation:
            scanner = None
        self._state = candidate
        self._scanner = scanner
        if history is not None:
            self._history = list(history)
        self._history.extend(appended)
        self._unlogged.extend(appended)

    def repair(self) -> list[str]:
        """Make the committed conversation valid (see `repair_conversation`); returns what was
        changed. The durable history keeps the original messages."""
        state = self._state
        conversation, notes = repair_conversation(state.conversation)
        if notes:
            self.commit(
                WorkingState(
                    conversation=conversation, summary=state.summary, revision=state.revision + 1
                )
            )
        return notes

    def problems(self) -> list[ToolPairProblem]:
        """What is wrong with the committed conversation (calls of its last turn may be open)."""
        return self._scan().finish(allow_unfinished=True)

    def _scan(self) -> ToolPairScanner:
        if self._scanner is None:
            self._scanner = ToolPairScanner().feed(self._state.conversation)
        return self._scanner

    def _check(self, appended: Sequence[UserMessage | AssistantMessage]) -> ToolPairScanner:
        base = self._scan()
        found: list[ToolPairProblem | str] = []
        # Checked against the committed scan without copying it (its set of ids grows with the
        # session): only the appended messages are looked at.
        pending = dict(base.pending)
        new_ids: set[str] = set()
        for offset, message in enumerate(appended):
            index = base.index + offset
            if not message.content:
                found.append(f"message {index}: its content is empty")
            if isinstance(message, AssistantMessage):
                found.extend(ToolPairProblem("missing_result", t, at) for t, at in pending.items())
                pending = {}
                for use in message.tool_uses:
                    if use.id in base.seen or use.id in new_ids:
                        found.append(ToolPairProblem("duplicate_id", use.id, index))
                    new_ids.add(use.id)
                    pending[use.id] = index
                continue
            for result in message.tool_results:
                if pending.pop(result.tool_use_id, None) is None:
                    found.append(ToolPairProblem("orphan_result", result.tool_use_id, index))
            found.extend(ToolPairProblem("missing_result", t, at) for t, at in pending.items())
            pending = {}
        if found:
            detail = "; ".join(str(p) for p in found[:3])
            who = (
                "the model's reply"
                if isinstance(appended[-1], AssistantMessage)
                else "the user message"
            )
            msg = (
                f"{who} was refused, it would make the conversation invalid: {detail}. Nothing "
                "was committed or logged; the agent's state is as before, so the next call "
                "works. Every tool_use id must be new, and a tool_result must answer a tool_use "
                "of the assistant message just before it."
            )
            raise InvalidConversation(msg, problems=tuple(found))
        return base.feed(appended)
