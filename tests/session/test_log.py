"""The SQLite session log: resume, isolation, search, bad files, concurrency, crash safety."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import SessionLogError, SessionNotFound, UsageError
from ctxlab.models import ScriptedModel, tool_call
from ctxlab.session import SessionKey, SessionLog


def fetch(page: int) -> str:
    """A log page."""
    return f"page {page} /var/log/app-{page}.log\n" + "lorem ipsum " * 100


def make(
    db: Path, replies: list[object], *, user: str = "alice", session: str = "s1", **kw: object
) -> Agent:
    return Agent(
        name="coder",
        model=ScriptedModel(replies, context_window=kw.pop("window", 200_000)),  # type: ignore[arg-type]
        tools=[fetch],
        counter=ApproximateCounter(),
        session_log=db,
        user_id=user,
        session_id=session,
        **kw,  # type: ignore[arg-type]
    )


async def test_an_agent_with_the_same_ids_resumes_the_committed_state(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    first = make(db, [tool_call("fetch", {"page": 1}), "Read page one."])
    first.tasks.begin("logs", "read them")
    await first("Read page 1")
    second = make(db, ["Page one was about lorem ipsum."])
    assert second.context == first.context
    assert second.history == first.history
    assert second.tasks.state == first.tasks.state
    await second("What was on it?")
    assert len(second.history) == 6
    # Another session id starts empty.
    assert make(db, [], session="s2").context.conversation == ()
    assert SessionLog(db).integrity() == "ok"


async def test_compaction_never_rewrites_the_log(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    agent = make(db, [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], window=2_000)
    await agent("Read the logs")
    assert agent.context.summary is not None
    log = SessionLog(db)
    assert len(log.message_payloads(agent.log.key)) == len(agent.history) == 16
    kinds = set(log.events(agent.log.key)["kind"])
    assert {"message", "context_build", "compaction", "model_response", "tool_result"} <= kinds
    builds = log.events(agent.log.key, "context_build")
    manifest = builds["payload"].iloc[0]["context_manifest"]
    assert manifest["validation"] == "passed" and manifest["items"]
    # The resumed agent gets the compacted working state and the full history.
    resumed = make(db, [])
    assert resumed.context.summary == agent.context.summary
    assert len(resumed.history) == 16


async def test_session_calls_and_tools_are_scoped_to_the_user(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    alice = make(
        db, [tool_call("fetch", {"page": 7}), "Alice's answer"], user="alice", session="a1"
    )
    await alice("Find the invoice INV-2042 in /var/log")
    bob = make(db, ["Bob's answer"], user="bob", session="b1")
    await bob("Where is my invoice?")
    assert list(alice.log.sessions()["session_id"]) == ["a1"]
    assert list(bob.log.sessions()["session_id"]) == ["b1"]
    found = alice.log.search("INV-2042")
    assert list(found["session_id"]) == ["a1"] and "[INV" in found["snippet"].iloc[0]
    assert bob.log.search("INV-2042").empty
    assert bob.log.search("app-7.log").empty
    assert len(alice.log.search("/var/log/app-7.log")) == 1
    history = alice.log.history(last_n=2)
    assert list(history["role"]) == ["user", "assistant"]
    assert history["text"].iloc[-1] == "Alice's answer"
    with pytest.raises(SessionNotFound, match="no session 'a1'"):
        bob.log.history("a1")
    with pytest.raises(SessionNotFound):
        alice.log.history("does-not-exist")
    with pytest.raises(UsageError, match="empty"):
        alice.log.search("  ")

    # The same, as the agent's tools.
    tools_model = ScriptedModel(
        [
            [
                tool_call("session_list"),
                tool_call("session_search", {"query": "INV-2042"}),
                tool_call("session_history", {"session_id": "a1", "last_n": 1}),
            ],
            "done",
        ]
    )
    snoop = Agent(
        name="coder",
        model=tools_model,
        counter=ApproximateCounter(),
        session_log=db,
        user_id="bob",
        session_id="b2",
    )
    snoop.log.enable_tools()
    await snoop("What did others do?")
    results = [
        r
        for m in tools_model.requests[1].messages
        if hasattr(m, "tool_results")
        for r in m.tool_results
    ]
    assert "a1" not in results[0].text and "b1" in results[0].text
    assert results[1].text.startswith("nothing matches")
    assert results[2].is_error and "SessionNotFound" in results[2].text


def test_bad_files_are_refused_and_left_untouched(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    before = corrupt.read_bytes()
    with pytest.raises(SessionLogError, match="not a readable SQLite database"):
        SessionLog(corrupt)
    assert corrupt.read_bytes() == before

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE invoices (id INTEGER, total INTEGER)")
        db.execute("INSERT INTO invoices VALUES (1, 100)")
    before = foreign.read_bytes()
    with pytest.raises(SessionLogError, match="another application's database"):
        SessionLog(foreign)
    assert foreign.read_bytes() == before

    old = tmp_path / "old.sqlite"
    SessionLog(old).close()
    with sqlite3.connect(old) as db:
        db.execute("UPDATE meta SET value='0' WHERE key='version'")
    with pytest.raises(SessionLogError, match="schema version 0"):
        SessionLog(old)
    with pytest.raises(SessionLogError, match="is a folder"):
        SessionLog(tmp_path)


async def test_two_agents_writing_two_sessions_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    steps = 25

    def agent(session: str) -> Agent:
        return make(
            db,
            [*(tool_call("fetch", {"page": i}) for i in range(steps)), "done"],
            session=session,
            max_steps=steps + 5,
        )

    first, second = agent("one"), agent("two")
    await asyncio.gather(first("go"), second("go"))
    log = SessionLog(db)
    for a in (first, second):
        assert len(log.message_payloads(a.log.key)) == len(a.history) == 2 * steps + 2
        assert log.checkpoint(a.log.key).turn == steps + 2  # type: ignore[union-attr]
    assert log.integrity() == "ok"


def _check_log(db: Path, reported: set[int]) -> int:
    log = SessionLog(db)
    try:
        assert log.integrity() == "ok"
        key = SessionKey("crash", "u1", "s1")
        turns = dict(
            log._query(
                "SELECT turn, events FROM turns WHERE agent_id=? AND user_id=? AND session_id=?",
                key.params(),
            )
        )
        counted = dict(
            log._query(
                "SELECT turn, COUNT(*) FROM events WHERE agent_id=? AND user_id=? AND session_id=?"
                " GROUP BY turn",
                key.params(),
            )
        )
        checkpoints = {row[0] for row in log._query("SELECT turn FROM checkpoints")}
        assert reported <= set(turns), f"reported turns missing: {sorted(reported - set(turns))}"
        assert counted == {t: n for t, n in turns.items() if n}, "a half-written turn"
        assert checkpoints == set(turns)
        assert sorted(turns) == list(range(1, len(turns) + 1))
        return len(turns)
    finally:
        log.close()


def _content(db: Path) -> dict[int, list[tuple[str, str]]]:
    """Every committed turn's events, to check that later crashes never change them."""
    log = SessionLog(db)
    try:
        rows = log._query(
            "SELECT turn, kind, payload FROM events WHERE agent_id=? AND user_id=? AND session_id=?"
            " ORDER BY seq",
            SessionKey("crash", "u1", "s1").params(),
        )
    finally:
        log.close()
    content: dict[int, list[tuple[str, str]]] = {}
    for turn, kind, payload in rows:
        content.setdefault(turn, []).append((kind, payload))
    return content


def _messages(db: Path) -> list[str]:
    log = SessionLog(db)
    try:
        return log.message_payloads(SessionKey("crash", "u1", "s1"))
    finally:
        log.close()


def test_sigkill_at_random_points_never_loses_or_halves_a_turn(tmp_path: Path) -> None:
    db = tmp_path / "crash.sqlite"
    child = Path(__file__).with_name("crash_child.py")
    rng = random.Random(1234)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Each kill starts a Python that imports ctxlab: ~1 s quiet, several under load (34 kills in
    # 240 s beside two benchmarks): the deadline only stops a hung run, the 50 kills are the test.
    kills, total_turns, deadline = 0, 0, time.monotonic() + 600
    previous: dict[int, list[tuple[str, str]]] = {}
    previous_messages: list[str] = []
    while kills < 50 and time.monotonic() < deadline:
        process = subprocess.Popen(
            [sys.executable, str(child), str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None
        ready = process.stdout.readline().decode()
        assert ready.startswith("READY"), process.stderr.read().decode() if process.stderr else ""
        # Seeded, spread over whole turns: wait for a few commits, then a fraction of a turn.
        lines = [process.stdout.readline().decode() for _ in range(rng.randint(0, 3))]
        time.sleep(rng.uniform(0.0, 0.02))
        process.send_signal(signal.SIGKILL)
        out, err = process.communicate(timeout=10)
        assert process.returncode == -signal.SIGKILL, err.decode()[-2000:]
        reported = {
            int(line.split()[1])
            for line in [*lines, *out.decode().splitlines()]
            if line.startswith("COMMITTED")
        }
        turns = _check_log(db, reported)
        assert turns >= total_turns  # nothing committed is ever lost
        content = _content(db)
        for turn, events in previous.items():
            assert content[turn] == events, f"turn {turn} changed after a later crash"
        messages = _messages(db)
        assert messages[: len(previous_messages)] == previous_messages  # earlier turns intact
        previous, previous_messages = content, messages
        total_turns = turns
        kills += 1
    assert kills >= 50
    assert total_turns >= 10  # the sessions made progress across the kills (about 50 here)
    sizes = sorted(len(events) for events in previous.values())
    assert sizes[len(sizes) // 2] >= 5  # most turns are steps of many events, killed mid-way
    # A final resume sees exactly the last checkpoint.
    resumed = Agent(
        name="crash",
        model=ScriptedModel([]),
        counter=ApproximateCounter(),
        session_log=db,
        user_id="u1",
        session_id="s1",
    )
    log = SessionLog(db)
    checkpoint = log.checkpoint(resumed.log.key)
    assert checkpoint is not None and checkpoint.turn == total_turns
    assert resumed.context.model_dump_json() == checkpoint.state


async def test_a_second_writer_of_one_session_is_refused_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    from ctxlab.exceptions import StateChanged

    db = tmp_path / "log.sqlite"
    first = make(db, ["one"])
    second = make(db, ["two"])  # the same ids, built before either wrote
    await first("first turn")
    with pytest.raises(StateChanged, match="another agent with the same ids committed since"):
        await second("second turn")
    # The first agent's turns are all there, and nothing of the refused one.
    resumed = make(db, ["three"])
    texts = [m.content[0].text for m in resumed.history]  # type: ignore[union-attr]
    assert texts == ["first turn", "one"]
    assert resumed.context.conversation == first.context.conversation
    # The resumed agent goes on from there.
    await resumed("and on")
    assert [m.content[0].text for m in make(db, []).history][-2:] == ["and on", "three"]  # type: ignore[union-attr]
