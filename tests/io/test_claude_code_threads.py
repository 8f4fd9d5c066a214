"""A Claude Code file's threads, each loaded apart, and the census of each against the file's
own line count (an independent count: the lines written): the main thread's census reads every
line of the file, the subagents' set apart by name; a subagent held in the session file reads
the whole file too, the other threads' lines set apart; one with its own file reads that file.
Claude Code records no System text and no tool schemas: none is made up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from tests.io.shown import added_up
from tests.io.test_claude_subagents import _line, _newer_layout, _parallel, _session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "claude_code"
SESSION = FIXTURE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
AGENT = FIXTURE / SESSION.stem / "subagents" / "agent-aac57f5.jsonl"


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _read(transcript: Transcript) -> int:
    census = added_up(transcript)
    return sum(census.read.values())


def _progress(tmp_path: Path) -> Path:
    # A subagent seen only through agent_progress lines, one of them reported twice.
    def progress(message: dict[str, Any], uuid: str) -> dict[str, Any]:
        return {
            "type": "progress",
            "sessionId": "s1",
            "parentToolUseID": "toolu_task",
            "data": {
                "type": "agent_progress",
                "agentId": "p1",
                "message": {**message, "uuid": uuid},
            },
        }

    task = {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "go"}}
    prompt = {"type": "user", "message": {"role": "user", "content": "go"}}
    answer = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "id": "mp",
            "content": [{"type": "text", "text": "went"}],
            "usage": {"input_tokens": 7, "output_tokens": 2},
        },
    }
    lines = [
        _line("user", "Start", uuid="u1"),
        _line("assistant", [task], mid="m1", uuid="a1"),
        progress(prompt, "p-1"),
        progress(answer, "p-2"),
        progress(answer, "p-2"),  # the same message reported again
        _line(
            "user",
            [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "went"}],
            uuid="u2",
        ),
        _line("assistant", [{"type": "text", "text": "Done."}], mid="m2", uuid="a2"),
    ]
    path = tmp_path / "progress.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


LAYOUTS = {
    "sidechain lines": _session,
    "parallel sidechains": _parallel,
    "own files": _newer_layout,
    "progress lines": _progress,
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_thread_reads_the_whole_file_it_came_from(layout: str, tmp_path: Path) -> None:
    path = LAYOUTS[layout](tmp_path)
    main = load(path)
    assert _read(main) == _lines(path)
    listed = main.meta["subagents"]
    inline = sum(e["lines"] for e in listed)
    assert main.meta.get("skipped", {}).get("subagent line", 0) == inline
    for entry in listed:
        agent = load(path, episode=entry["episode"])
        assert agent.meta["subagent"] == entry
        assert agent.name == f"{path.stem}#{entry['episode']}"
        own = entry.get("file")
        if own is not None:
            assert _read(agent) == _lines(Path(own))
            assert "in another thread (the main one or another subagent)" not in agent.meta.get(
                "skipped", {}
            )
        else:
            assert _read(agent) == _lines(path)
            assert agent.meta["skipped"][
                "in another thread (the main one or another subagent)"
            ] == (_lines(path) - entry["lines"])
        for transcript in (main, agent):
            assert (transcript.system, transcript.tools) == ("", ())


def test_a_progress_line_reported_twice_is_read_once_and_counted(tmp_path: Path) -> None:
    path = _progress(tmp_path)
    main = load(path)
    assert main.meta["skipped"]["repeated subagent line"] == 1
    assert main.meta["subagents"] == [
        {"episode": 1, "task_call_id": "toolu_task", "agent_id": "p1", "kind": "task", "lines": 2}
    ]
    agent = load(path, episode=1)
    said = [[getattr(b, "text", None) for b in m.content] for m in agent.messages]
    assert said == [["go"], ["went"]]


def test_the_real_session_and_its_subagents_file(tmp_path: Path) -> None:
    main = load(SESSION)
    assert _read(main) == _lines(SESSION) == 238
    assert main.meta["skipped"]["subagent line"] == 25
    agent = load(SESSION, episode=1)
    assert _read(agent) == _lines(AGENT) == 40
    assert agent.meta["subagent_of"] == SESSION.stem
    alone = load(AGENT)
    assert (alone.meta["subagent_of"], alone.meta["agent_id"]) == (SESSION.stem, "aac57f5")
    assert (alone.system, alone.tools) == ("", ())
    # The same lines under another name are no subagent's file: nothing says whose they are.
    renamed = tmp_path / "session-copy.jsonl"
    shutil.copy(AGENT, renamed)
    assert "agent_id" not in load(renamed).meta
    # An agent-*.jsonl that holds a main thread is that thread, not a subagent's file.
    main_named = tmp_path / "agent-main.jsonl"
    shutil.copy(SESSION, main_named)
    assert "agent_id" not in load(main_named).meta


def test_the_former_splice_of_sidechains_records_no_system_either(tmp_path: Path) -> None:
    spliced = load(_session(tmp_path), sidechains=True)
    assert (spliced.system, spliced.tools) == ("", ())
    assert _read(spliced) == _lines(tmp_path / "session.jsonl")


def test_a_bad_line_of_a_subagent_is_named_by_its_thread(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[4]["message"]["usage"]["output_tokens"] = -1  # the subagent's first reply
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(MessageFormatError, match=r"session\.jsonl subagent 1 line 5: "):
        load(path, episode=1)
    (tmp_path / "newer").mkdir()
    session = _newer_layout(tmp_path / "newer")
    own = session.parent / "s1" / "subagents" / "agent-abc.jsonl"
    bad = [json.loads(line) for line in own.read_text().splitlines()]
    bad[1]["message"]["usage"]["output_tokens"] = -1
    own.write_text("".join(json.dumps(line) + "\n" for line in bad))
    with pytest.raises(MessageFormatError, match=r"agent-abc\.jsonl line 2: "):
        load(session, episode=1)


def _result(*ids: str, agent: str | None = None, uuid: str = "r") -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
    extra = {"toolUseResult": {"agentId": agent}} if agent else {}
    return _line("user", content, uuid=uuid, **extra)


def test_subagents_are_listed_in_the_order_the_file_first_mentions_them(tmp_path: Path) -> None:
    def progress(message: dict[str, Any], call: str | None, uuid: str) -> dict[str, Any]:
        data = {"type": "agent_progress", "message": {**message, "uuid": uuid}}
        return {"type": "progress", "sessionId": "s1", "parentToolUseID": call, "data": data}

    said = {"type": "user", "message": {"role": "user", "content": "go"}}
    tasks = [
        {"type": "tool_use", "id": f"toolu_{c}", "name": "Task", "input": {"prompt": c}}
        for c in "abcd"
    ]
    lines = [
        _line("user", "Start", uuid="u1"),
        _line("assistant", tasks, mid="m1", uuid="a1"),
        progress(said, "toolu_b", "pb1"),  # line 3: no agent id, its call
        progress(said, None, ""),  # line 4: neither (and no uuid: never "the same again")
        progress(said, None, ""),
        _result("toolu_a", agent="own1", uuid="r1"),  # line 6: names the agent of toolu_a
        _result("toolu_b", "toolu_d", agent="two", uuid="r2"),  # two results: names no call
        _result("toolu_c", uuid="r3"),
        _line("assistant", [{"type": "text", "text": "Done."}], mid="m2", uuid="a2"),
    ]
    session = tmp_path / "s1.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    folder = tmp_path / "s1" / "subagents"
    folder.mkdir(parents=True)
    for name in ("own1", "acompact-x1", "bad", "list", "two", "zz"):
        line = _line("user", "go", uuid=f"x-{name}", isSidechain=True, agentId=name)
        (folder / f"agent-{name}.jsonl").write_text(json.dumps(line) + "\n")
    (folder / "agent-bad.meta.json").write_text("{not json")
    (folder / "agent-list.meta.json").write_text('["Plan"]')
    (folder / "agent-zz.meta.json").write_text(
        json.dumps({"agentType": "Plan", "description": "plan it", "toolUseId": "toolu_c"})
    )

    def own(name: str, call: str | None = None, kind: str = "task") -> dict[str, Any]:
        entry = {"task_call_id": call, "agent_id": name, "kind": kind, "lines": 0}
        return {**entry, "file": str(folder / f"agent-{name}.jsonl")}

    listed = load(session).meta["subagents"]
    assert listed == [
        {"episode": 1, "task_call_id": "toolu_b", "agent_id": None, "kind": "task", "lines": 1},
        {"episode": 2, "task_call_id": None, "agent_id": None, "kind": "task", "lines": 2},
        {"episode": 3, **own("own1", "toolu_a")},
        # Never mentioned in the session file: after the others, by name.
        {"episode": 4, **own("acompact-x1", kind="compaction")},
        {"episode": 5, **own("bad")},
        {"episode": 6, **own("list")},
        {"episode": 7, **own("two")},
        {"episode": 8, **own("zz", "toolu_c"), "agent_type": "Plan", "description": "plan it"},
    ]
    assert load(session).meta.get("skipped", {}).get("repeated subagent line") is None


def test_sidechain_lines_are_grouped_by_agent_id_before_their_chain(tmp_path: Path) -> None:
    # Two agents whose lines chain into one another (the second's prompt hangs from the
    # first's last line): their agent ids keep them apart. A loop in a chain ends.
    def side(text: str, uuid: str, parent: str | None, agent: str | None) -> dict[str, Any]:
        extra = {"agentId": agent} if agent is not None else {}
        return _line("user", text, uuid=uuid, parentUuid=parent, isSidechain=True, **extra)

    lines = [
        _line("user", "Start", uuid="u1"),
        side("first", "f1", None, "7"),
        side("second", "s1", "f1", "8"),
        side("looped", "l1", "l2", None),
        side("looped again", "l2", "l1", None),
        _line("assistant", [{"type": "text", "text": "Done."}], mid="m2", uuid="a2"),
    ]
    path = tmp_path / "chained.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    listed = load(path).meta["subagents"]
    # The loop's two lines each end their walk at the other: two chains (a damaged file).
    assert [(e["agent_id"], e["lines"]) for e in listed] == [
        ("7", 1),
        ("8", 1),
        (None, 1),
        (None, 1),
    ]
    said = [load(path, episode=n).messages[0].content[0].text for n in (1, 2, 3, 4)]  # type: ignore[union-attr]
    assert said == ["first", "second", "looped", "looped again"]
