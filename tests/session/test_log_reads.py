"""`SessionLog` read and written directly, each documented promise on the values a caller gets
back: a turn's number and checkpoint, a writer that read a stale turn count refused with nothing
written, every read scoped to its (agent, user, session) — another user's session with the same
ids never shows —, `history` the latest messages oldest first, `sessions` newest first,
`search` with plain words (punctuation quoted) or FTS5's own operators, and `transcript` the
logged messages with each reply's usage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab.exceptions import SessionLogError, SessionNotFound, StateChanged, UsageError
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from ctxlab.session import SessionKey, SessionLog
from ctxlab.session._records import LoggedMessage

ALICE = SessionKey("coder", "alice", "s1")
BOB = SessionKey("coder", "bob", "s1")  # the same agent and session ids, another user
ALICE_OTHER_AGENT = SessionKey("reviewer", "alice", "s1")


def _logged(message: UserMessage | AssistantMessage, text: str) -> LoggedMessage:
    return LoggedMessage(message.role, message.model_dump_json(), text)


def _turn(
    log: SessionLog, key: SessionKey, prompt: str, reply: str, expected_turns: int | None = None
) -> int:
    messages = [
        _logged(UserMessage(content=prompt), prompt),
        _logged(AssistantMessage(content=reply), reply),
    ]
    usage = {"input_tokens": 100 + len(prompt), "output_tokens": 7}
    events = [("model_response", {"request_id": "r", "stop": "end_turn", "usage": usage})]
    state = f"state after {prompt}"
    return log.commit_turn(
        key, events=events, messages=messages, state=state, task="t", expected_turns=expected_turns
    )


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SessionLog]:
    opened = SessionLog(tmp_path / "log.sqlite")
    yield opened
    opened.close()


def test_turns_are_numbered_from_1_and_the_checkpoint_is_the_latest(log: SessionLog) -> None:
    assert log.checkpoint(ALICE) is None and not log.exists(ALICE)
    assert _turn(log, ALICE, "fix the export", "reading it") == 1
    assert _turn(log, ALICE, "and the import", "done") == 2
    checkpoint = log.checkpoint(ALICE)
    assert checkpoint is not None
    assert (checkpoint.turn, checkpoint.state, checkpoint.task) == (
        2,
        "state after and the import",
        "t",
    )
    assert log.exists(ALICE) and not log.exists(BOB) and log.checkpoint(BOB) is None
    events = log.events(ALICE)
    assert list(events["turn"]) == [1, 1, 1, 2, 2, 2]
    assert list(events["kind"]) == ["message", "message", "model_response"] * 2
    assert list(events["seq"]) == sorted(events["seq"])
    only = log.events(ALICE, "model_response")
    assert [p["usage"]["input_tokens"] for p in only["payload"]] == [114, 114]


def test_a_writer_that_read_a_stale_turn_count_writes_nothing(log: SessionLog) -> None:
    _turn(log, ALICE, "first", "ok", expected_turns=0)
    with pytest.raises(StateChanged, match="has 1 committed turns, not the 0 this agent read"):
        _turn(log, ALICE, "second", "lost", expected_turns=0)
    assert len(log.message_payloads(ALICE)) == 2
    checkpoint = log.checkpoint(ALICE)
    assert checkpoint is not None and checkpoint.turn == 1
    assert _turn(log, ALICE, "second", "ok", expected_turns=1) == 2


def test_every_read_is_scoped_to_the_agent_user_and_session(log: SessionLog) -> None:
    _turn(log, ALICE, "Alice's invoice INV-2042", "noted")
    _turn(log, BOB, "Bob's invoice INV-7", "noted too")
    _turn(log, ALICE_OTHER_AGENT, "Alice reviews INV-2042", "reviewed")
    mine = [UserMessage(content="Alice's invoice INV-2042"), AssistantMessage(content="noted")]
    payloads = log.message_payloads(ALICE)
    assert [
        UserMessage.model_validate_json(payloads[0]),
        AssistantMessage.model_validate_json(payloads[1]),
    ] == mine
    assert len(payloads) == 2
    assert log.transcript(ALICE).messages == tuple(mine)
    assert list(log.history(BOB)["text"]) == ["Bob's invoice INV-7", "noted too"]
    assert [k for k, _ in log.event_payloads(ALICE, ("model_response",))] == ["model_response"]
    assert log.event_payloads(ALICE, ("compaction",)) == []
    found = log.search("invoice", user_id="alice")
    assert set(zip(found["agent_id"], found["session_id"], strict=True)) == {("coder", "s1")}
    assert list(log.search("INV-2042", user_id="alice", agent_id="reviewer")["agent_id"]) == [
        "reviewer"
    ]
    assert log.search("INV-7", user_id="alice").empty
    assert list(log.sessions(user_id="bob")["turns"]) == [1]
    with pytest.raises(SessionNotFound, match="no session 's2' of agent 'coder' for this user"):
        log.history(SessionKey("coder", "alice", "s2"))
    with pytest.raises(SessionNotFound):
        log.events(SessionKey("coder", "carol", "s1"))


def test_history_is_the_latest_messages_oldest_first(log: SessionLog) -> None:
    for n in range(3):
        _turn(log, ALICE, f"prompt {n}", f"reply {n}")
    recent = log.history(ALICE, last_n=3)
    assert list(recent["text"]) == ["reply 1", "prompt 2", "reply 2"]
    assert list(recent["turn"]) == [2, 3, 3]
    assert list(recent["role"]) == ["assistant", "user", "assistant"]
    assert len(log.history(ALICE, last_n=1)) == 1 and len(log.history(ALICE)) == 6
    with pytest.raises(
        UsageError, match="last_n must be a whole number from 1 to 2,147,483,647, got 0"
    ):
        log.history(ALICE, last_n=0)


def test_sessions_are_the_users_newest_first_of_one_agent_when_named(log: SessionLog) -> None:
    _turn(log, ALICE, "one", "ok")
    time.sleep(0.01)
    _turn(log, ALICE_OTHER_AGENT, "two", "ok")
    _turn(log, ALICE_OTHER_AGENT, "three", "ok")
    _turn(log, BOB, "bob's", "ok")
    listed = log.sessions(user_id="alice")
    assert list(zip(listed["agent_id"], listed["turns"], strict=True)) == [
        ("reviewer", 2),
        ("coder", 1),
    ]
    assert str(listed["updated_at"].dt.tz) == "UTC"
    assert listed["updated_at"].iloc[0] > listed["updated_at"].iloc[1]
    assert listed["created_at"].iloc[0] <= listed["updated_at"].iloc[0]
    assert list(log.sessions(user_id="alice", agent_id="coder")["agent_id"]) == ["coder"]


@pytest.mark.parametrize(
    ("query", "texts"),
    [
        ("src/export.py", ["the bug is in src/export.py line 40"]),  # punctuation, quoted
        ("export line", ["the bug is in src/export.py line 40"]),  # both words, anywhere
        ('"export line"', []),  # a phrase: the words adjacent
        ('"line 40"', ["the bug is in src/export.py line 40"]),
        ("invoice OR importer", ["the invoice total is wrong", "the importer skips a row"]),
        ("invoice AND total", ["the invoice total is wrong"]),
        ("invoice NOT total", []),
        ("import*", ["the importer skips a row"]),
    ],
)
def test_search_takes_plain_words_or_fts5s_operators(
    log: SessionLog, query: str, texts: list[str]
) -> None:
    for text in (
        "the bug is in src/export.py line 40",
        "the invoice total is wrong",
        "the importer skips a row",
    ):
        _turn(log, ALICE, text, "ok")
    found = log.search(query, user_id="alice")
    assert sorted(s.replace("[", "").replace("]", "") for s in found["snippet"]) == sorted(texts)
    assert all(role == "user" for role in found["role"])


def test_search_marks_the_match_and_refuses_an_empty_or_broken_query(log: SessionLog) -> None:
    _turn(log, ALICE, "the invoice total is wrong", "ok")
    assert list(log.search("invoice", user_id="alice")["snippet"]) == [
        "the [invoice] total is wrong"
    ]
    assert len(log.search("ok", user_id="alice", limit=0)) == 0
    with pytest.raises(UsageError, match="the search query is empty"):
        log.search("  ", user_id="alice")
    with pytest.raises(UsageError, match="cannot search for"):
        log.search('"unclosed', user_id="alice")


def test_the_transcript_is_the_logged_messages_with_each_replys_usage(log: SessionLog) -> None:
    _turn(log, ALICE, "fix it", "fixed")
    _turn(log, ALICE, "test it", "tested")
    transcript = log.transcript(ALICE)
    texts = [b.text for m in transcript.messages for b in m.content]  # type: ignore[union-attr]
    assert texts == ["fix it", "fixed", "test it", "tested"]
    assert transcript.usage == {1: ProviderUsage(106, 7), 3: ProviderUsage(107, 7)}
    assert (transcript.name, transcript.meta["agent_id"], transcript.system) == ("s1", "coder", "")
    assert log.integrity() == "ok"
    with pytest.raises(SessionNotFound):
        log.transcript(BOB)


def test_the_transcripts_meta_names_the_session_and_a_reply_without_usage_drops_the_pairing(
    log: SessionLog,
) -> None:
    key = SessionKey("coder", "alice", "s-42")
    _turn(log, key, "fix it", "fixed")
    # A response logged without usage (a provider that reports none), and another event kind
    # with usage: neither is a reply's bill.
    messages = [
        _logged(UserMessage(content="test it"), "test it"),
        _logged(AssistantMessage(content="tested"), "tested"),
    ]
    events = [
        ("model_response", {"request_id": "r2", "stop": "end_turn", "usage": None}),
        ("compaction", {"usage": {"input_tokens": 5, "output_tokens": 1}}),
    ]
    log.commit_turn(key, events=events, messages=messages, state="s", task="t")
    transcript = log.transcript(key)
    assert transcript.meta == {"source": "ctxlab", "agent_id": "coder", "session_id": "s-42"}
    assert transcript.name == "s-42" and transcript.tools == ()
    # One usage for two replies: which reply it belongs to is unknown, so none is placed.
    assert transcript.usage == {}
    assert len(transcript.messages) == 4


def test_a_read_only_log_refuses_a_turn_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    writer = SessionLog(path)
    _turn(writer, ALICE, "one", "ok")
    writer.close()
    reader = SessionLog(path)
    reader.read_only = True  # as a read-only file opens it
    with pytest.raises(SessionLogError, match="is read-only"):
        _turn(reader, ALICE, "two", "lost")
    assert len(reader.message_payloads(ALICE)) == 2
    reader.close()
