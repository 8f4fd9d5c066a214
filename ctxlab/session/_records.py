"""What the session log stores and hands back: session keys, checkpoints, logged messages."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Checkpoint", "LoggedMessage", "SessionKey"]


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Who a session belongs to. A missing user is stored as the empty string."""

    agent_id: str
    user_id: str
    session_id: str

    def params(self) -> tuple[str, str, str]:
        return (self.agent_id, self.user_id, self.session_id)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The working state as of a committed turn (JSON documents)."""

    turn: int
    state: str
    task: str


@dataclass(frozen=True, slots=True)
class LoggedMessage:
    """A message for the log: its role, JSON and plain text (indexed for search)."""

    role: str
    json: str
    text: str
