"""What the session log's documentation promises, on the messages a user gets back: every read
is scoped to the user — two users with the same agent and session ids resume, read and export
only their own messages —, a resumed agent's history is the logged conversation in the order it
happened, `history(last_n)` is the latest messages oldest first, and `sessions()` lists the
newest first."""

from __future__ import annotations

import time
from pathlib import Path

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.models import ScriptedModel
from ctxlab.session import SessionKey, SessionLog


def _agent(db: Path, replies: list[object], *, user: str, session: str = "s1") -> Agent:
    return Agent(
        name="coder",
        model=ScriptedModel(replies),  # type: ignore[arg-type]
        counter=ApproximateCounter(),
        session_log=db,
        user_id=user,
        session_id=session,
    )


def _texts(messages: object) -> list[str]:
    return [
        b.text
        for m in messages  # type: ignore[attr-defined]
        if isinstance(m, UserMessage | AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]


async def test_two_users_with_the_same_ids_resume_and_read_only_their_own_messages(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.sqlite"
    alice = _agent(db, ["Alice's answer"], user="alice")
    await alice("Alice's secret: the invoice is INV-2042")
    bob = _agent(db, ["Bob's answer"], user="bob")  # same agent name, same session id
    await bob("Bob's question")
    mine = ["Alice's secret: the invoice is INV-2042", "Alice's answer"]
    # Resumed: the working conversation and the durable history are hers alone.
    resumed = _agent(db, [], user="alice")
    assert _texts(resumed.history) == mine
    assert _texts(resumed.context.conversation) == mine
    assert _texts(_agent(db, [], user="bob").history) == ["Bob's question", "Bob's answer"]
    # As a transcript, and as the logged payloads.
    log = SessionLog(db)
    key = SessionKey("coder", "alice", "s1")
    assert _texts(log.transcript(key).messages) == mine
    assert len(log.message_payloads(key)) == 2
    assert list(log.history(key)["text"]) == mine
    assert set(log.events(key)["turn"]) == {1, 2}
    # A user with no session of these ids has none.
    assert not log.exists(SessionKey("coder", "eve", "s1"))


async def test_a_resumed_history_is_the_logged_conversation_in_order(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    said = [f"message {n}" for n in range(6)]
    first = _agent(db, [f"reply {n}" for n in range(6)], user="u")
    for text in said:
        await first(text)
    expected = [t for n in range(6) for t in (said[n], f"reply {n}")]
    assert _texts(_agent(db, [], user="u").history) == expected
    log = SessionLog(db)
    key = SessionKey("coder", "u", "s1")
    # The latest messages, oldest first.
    assert list(log.history(key, last_n=3)["text"]) == expected[-3:]
    assert _texts(log.transcript(key).messages) == expected


async def test_sessions_are_listed_newest_first(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    for session in ("first", "second", "third"):
        await _agent(db, ["ok"], user="u", session=session)("hello")
        time.sleep(0.01)  # distinct update times
    await _agent(db, ["ok again"], user="u", session="first")("back to the first")
    listed = SessionLog(db).sessions(user_id="u")
    assert list(listed["session_id"]) == ["first", "third", "second"]
    assert listed["updated_at"].is_monotonic_decreasing
