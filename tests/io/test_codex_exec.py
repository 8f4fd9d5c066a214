"""``codex exec --json`` streams (``tests/fixtures/codex_exec``, hand-made from Codex's own event
types — the CLI needs a model account to run): the 0.44-on thread events and the older protocol
events, each checked against the test's own reading of the lines — every tool item a call with
its result, the turn's usage kept as the total it is, the older per-call token counts on the
replies in order — and hostile streams refused with a typed error or loaded with their losses
counted (the fixtures mutated or cut short: `test_census_mutations`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ctxlab import load
from ctxlab.analysis._recorded import unrecorded_parts
from ctxlab.io import detect_format
from ctxlab.io.formats.codex_exec.parse import STAND_IN_PROMPT
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, calls, texts

FOLDER = Path(__file__).parents[1] / "fixtures" / "codex_exec"
NEW = FOLDER / "exec-0.60.jsonl"
OLD = FOLDER / "exec-0.30.jsonl"
TOOL_ITEMS = {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call"}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_thread_stream_loads_whole() -> None:
    events = _lines(NEW)
    transcript = load(NEW)
    assert transcript.meta["source"] == "codex_exec"
    done = [e["item"] for e in events if e["type"] == "item.completed"]
    tools = [i for i in done if i["type"] in TOOL_ITEMS]
    uses = [b for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    assert [u.id for u in uses] == [i["id"] for i in tools]
    assert [r.tool_use_id for r in results] == [i["id"] for i in tools]
    assert [r.is_error for r in results] == [i.get("status") == "failed" for i in tools]
    said = [i["text"] for i in done if i["type"] == "agent_message"]
    replied = texts(transcript)
    assert replied == said
    # The prompt is not in the stream: one stand-in per turn, said as unrecorded.
    turns = sum(e["type"] == "turn.started" for e in events)
    stand_ins = [m for m in transcript.messages if m.role == "user" and m.content[0].type == "text"]
    assert [m.content[0].text for m in stand_ins] == [STAND_IN_PROMPT] * turns  # type: ignore[union-attr]
    assert "user prompts" in unrecorded_parts(transcript)
    # The turn's usage is a total over its requests: kept, not put on one of them.
    assert transcript.usage == {}
    assert transcript.meta["turn_usage"] == [
        e["usage"] for e in events if e["type"] == "turn.completed"
    ]
    # Every other line counted, by what it is.
    skipped = transcript.meta["skipped"]
    others = Counter(
        f"{i['type']} item" for i in done if i["type"] not in TOOL_ITEMS | {"agent_message"}
    )
    for key, count in others.items():
        assert skipped[key] == count
    assert skipped["item.started"] == sum(e["type"] == "item.started" for e in events)
    assert skipped["event item.updated"] == sum(e["type"] == "item.updated" for e in events)


def test_the_older_stream_puts_each_token_count_on_its_reply() -> None:
    events = _lines(OLD)
    transcript = load(OLD)
    assert transcript.messages[0].content[0].text == events[0]["prompt"]  # type: ignore[union-attr]
    counts = [e["msg"] for e in events if e.get("msg", {}).get("type") == "token_count"]
    expected = [
        ProviderUsage(
            c["input_tokens"] - c["cached_input_tokens"],
            c["output_tokens"],
            c["cached_input_tokens"],
        )
        for c in counts
    ]
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    replies = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    assert sorted(transcript.usage) == replies
    ends = [e["msg"] for e in events if e.get("msg", {}).get("type", "").endswith("_end")]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == [e["call_id"] for e in ends]
    assert transcript.meta["models"] == [events[0]["model"]]


def test_token_counts_that_do_not_match_the_replies_are_counted(tmp_path: Path) -> None:
    events = _lines(OLD)
    extra = next(e for e in events if e.get("msg", {}).get("type") == "token_count")
    path = tmp_path / "exec.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*events, extra]))
    transcript = load(path)
    assert transcript.usage == {}
    census = added_up(transcript)
    assert census.usage_lost == {"token_count not matched to a reply": 4}
    assert sum(census.read.values()) == len(events) + 1


def test_a_run_cut_off_keeps_its_unfinished_call(tmp_path: Path) -> None:
    lines = NEW.read_text().splitlines()
    # Up to the second command's start: the call is kept and answered by the repair.
    cut_at = next(i for i, line in enumerate(lines) if '"item_6"' in line)
    path = tmp_path / "exec.jsonl"
    path.write_text("\n".join(lines[: cut_at + 1]) + "\n")
    transcript = load(path)
    assert transcript.messages[-1].tool_results[0].tool_use_id == "item_6"  # type: ignore[union-attr]
    assert transcript.meta["unfinished_calls"] == 1 and transcript.meta["synthesized_results"] == 1


def test_both_generations_are_detected_as_exec_streams() -> None:
    assert detect_format(_lines(NEW)[0]) == "codex_exec"
    assert detect_format(_lines(OLD)[0]) == "codex_exec"


def test_the_later_token_count_shape_reads_the_last_calls_usage(tmp_path: Path) -> None:
    # Later protocol events carry info.last_token_usage (and the running total beside it).
    events = _lines(OLD)
    total = {"input_tokens": 99_999, "cached_input_tokens": 0, "output_tokens": 9_999}
    for event in events:
        msg = event.get("msg", {})
        if msg.get("type") == "token_count":
            last = {k: msg.pop(k) for k in list(msg) if k != "type"}
            msg["info"] = {"total_token_usage": total, "last_token_usage": last}
    path = tmp_path / "exec.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert load(path).usage == load(OLD).usage


def _protocol(tmp_path: Path, msgs: list[dict[str, Any]], model: str = "codex-mini") -> Any:
    settings = {"model": model, "sandbox": "workspace-write", "prompt": "Fix it."}
    lines = [settings, *({"id": "0", "msg": m} for m in msgs)]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return load(path, format="codex_exec")


def test_each_older_call_is_its_begin_and_end_as_the_module_says(tmp_path: Path) -> None:
    invocation = {"server": "docs", "tool": "search", "arguments": '{"q": "cart"}'}
    msgs = [
        {"type": "session_configured", "model": "codex-mini-2"},
        {"type": "exec_command_begin", "call_id": "c1", "command": ["ls"]},
        {"type": "exec_command_end", "call_id": "c1", "stdout": "a.py\n", "stderr": "warn\n"},
        {"type": "exec_command_begin", "call_id": "c2", "command": ["false"]},
        {"type": "exec_command_end", "call_id": "c2", "aggregated_output": "all", "exit_code": 1},
        {"type": "exec_command_end", "call_id": "c3", "command": ["pwd"], "exit_code": 0},
        {"type": "patch_apply_begin", "call_id": "p1", "changes": {"a.py": {"add": {}}}},
        {"type": "patch_apply_end", "call_id": "p1", "stdout": "done", "success": False},
        {"type": "patch_apply_end", "call_id": "p2", "stderr": "ok", "success": True},
        {"type": "mcp_tool_call_begin", "call_id": "m1", "invocation": invocation},
        {
            "type": "mcp_tool_call_end",
            "call_id": "m1",
            "result": {"Ok": {"content": [{"type": "text", "text": "one"}, {"text": "two"}]}},
        },
        {
            "type": "mcp_tool_call_end",
            "call_id": "m2",
            "invocation": {"server": "s", "tool": "t", "arguments": {"k": 1}},
            "result": {"Ok": {"content": [{"type": "image", "data": "é"}]}},
        },
        {
            "type": "mcp_tool_call_end",
            "call_id": "m3",
            "invocation": {"server": "s", "tool": "u", "arguments": 7},
            "result": {"Err": "refused"},
        },
        {"type": "agent_message", "message": ""},
        {"type": "token_count", "info": None},
        {"type": "task_complete"},
        {"type": "exec_command_begin", "call_id": "c9", "command": ["sleep", "9"]},
    ]
    transcript = _protocol(tmp_path, msgs)
    assert calls(transcript) == {
        "c1": ("shell", {"command": ["ls"]}),
        "c2": ("shell", {"command": ["false"]}),
        "c3": ("shell", {"command": ["pwd"]}),  # no begin: the end's command
        "p1": ("apply_patch", {"changes": {"a.py": {"add": {}}}}),
        "p2": ("apply_patch", {"changes": None}),
        "m1": ("docs.search", {"q": "cart"}),
        "m2": ("s.t", {"k": 1}),
        "m3": ("s.u", {"arguments": 7}),
        "c9": ("shell", {"command": ["sleep", "9"]}),  # begun, never ended: kept
    }
    results = {
        r.tool_use_id: (r.text, bool(r.is_error))
        for m in transcript.messages
        if m.role == "user"
        for r in m.tool_results  # type: ignore[union-attr]
    }
    assert results["c1"] == ("a.py\nwarn\n", False)  # its output, then its errors
    assert results["c2"] == ("all", True)  # a non-zero exit code
    assert results["c3"] == ("(no output)", False)
    assert results["p1"] == ("done", True)
    assert results["p2"] == ("ok", False)
    assert results["m1"] == ("one\ntwo", False)  # the content items' text
    assert results["m2"] == ('[{"type": "image", "data": "é"}]', False)  # no text: the JSON
    assert results["m3"] == ("refused", True)
    assert results["c9"][1]  # answered by the repair, as an error
    meta = transcript.meta
    assert meta["models"] == ["codex-mini"]  # the settings line's, not replaced
    assert meta["skipped"] == {
        "event session_configured": 1,
        "empty agent message": 1,
        "event token_count without usage": 1,
        "event task_complete": 1,
    }
    census = added_up(transcript)
    assert sum(census.read.values()) == len(msgs) + 1
    assert census.read["msg exec_command_end"] == 3


def test_an_older_stream_without_settings_takes_the_configured_model(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = [
        {"id": "0", "msg": {"type": "session_configured", "model": "codex-mini-2"}},
        {"id": "0", "msg": {"type": "agent_message", "message": "hi"}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert load(path, format="codex_exec").meta["models"] == ["codex-mini-2"]


def _thread(tmp_path: Path, events: list[dict[str, Any]]) -> Any:
    path = tmp_path / "new.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return load(path, format="codex_exec")


def _done(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "item.completed", "item": item}


def test_each_tool_item_is_a_call_and_its_result_as_the_module_says(tmp_path: Path) -> None:
    command = {"type": "command_execution", "command": "ls"}
    events = [
        {"type": "thread.started", "thread_id": "th-1"},
        {"type": "session.created", "session_id": "ignored: the thread's id came first"},
        {"type": "turn.started"},
        {"type": "item.started", "item": {"id": "i0", **command, "status": "in_progress"}},
        _done({"id": "i0", **command, "aggregated_output": "a.py", "exit_code": 0}),
        _done({"id": "i1", **command, "aggregated_output": " ", "exit_code": 2}),
        _done({"id": "i2", **command, "aggregated_output": "x", "status": "declined"}),
        _done({"id": "i3", "type": "file_change", "changes": [{"path": "a"}], "status": "failed"}),
        _done({"id": "i4", "type": "file_change", "changes": [], "status": "completed"}),
        _done(
            {
                "id": "i5",
                "type": "mcp_tool_call",
                "server": "docs",
                "tool": "search",
                "arguments": '{"q": 1}',
                "result": {"content": [{"type": "text", "text": "found"}]},
            }
        ),
        _done(
            {
                "id": "i6",
                "type": "mcp_tool_call",
                "server": "docs",
                "tool": "fetch",
                "arguments": {"u": "x"},
                "error": {"message": "timed out"},
            }
        ),
        _done(
            {
                "id": "i7",
                "type": "collab_tool_call",
                "prompt": "help",
                "agents_states": {"b": "é"},
            }
        ),
        _done({"id": "i8", "type": "collab_tool_call", "tool": "spawn", "prompt": "p"}),
        _done({"id": "i9", "type": "web_search", "query": "cart"}),
        _done({"id": "r1", "type": "reasoning", "text": "hm"}),
        _done({"id": "r2", "type": "agent_message", "text": ""}),
        _done({"id": "r3", "type": "agent_message", "text": "Done."}),
        {"type": "item.updated", "item": {"id": "r4"}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}},
        {"type": "item.started", "item": {"id": "i10", **command, "status": "in_progress"}},
    ]
    transcript = _thread(tmp_path, events)
    assert calls(transcript) == {
        "i0": ("shell", {"command": "ls"}),
        "i1": ("shell", {"command": "ls"}),
        "i2": ("shell", {"command": "ls"}),
        "i3": ("apply_patch", {"changes": [{"path": "a"}]}),
        "i4": ("apply_patch", {"changes": []}),
        "i5": ("docs.search", {"q": 1}),
        "i6": ("docs.fetch", {"u": "x"}),
        "i7": ("collab", {"prompt": "help"}),
        "i8": ("spawn", {"prompt": "p"}),
        "i10": ("shell", {"command": "ls"}),  # started, never completed: kept
    }
    results = {
        r.tool_use_id: (r.text, bool(r.is_error))
        for m in transcript.messages
        if m.role == "user"
        for r in m.tool_results  # type: ignore[union-attr]
    }
    assert results["i0"] == ("a.py", False)
    assert results["i1"] == ("(exit code 2, no output)", True)
    assert results["i2"] == ("x", True)  # declined
    assert results["i3"] == ("patch failed", True)
    assert results["i4"] == ("patch completed", False)
    assert results["i5"] == ("found", False)
    assert results["i6"] == ("timed out", True)
    assert results["i7"] == ('{"b": "é"}', False)
    assert results["i10"][1]  # answered by the repair
    provider = [b for m in transcript.messages for b in m.content if b.type == "provider"]
    assert [b.data["query"] for b in provider] == ["cart"]  # type: ignore[union-attr]
    meta = transcript.meta
    assert meta["thread_id"] == "th-1"
    assert meta["turn_usage"] == [{"input_tokens": 10, "output_tokens": 2}]
    assert meta["unrecorded_prompts"] == 1 and meta["unfinished_calls"] == 1
    assert transcript.usage == {}  # a turn's total is never spread over its requests
    assert meta["skipped"] == {
        "item.started": 2,
        "reasoning item": 1,
        "empty agent message": 1,
        "event item.updated": 1,
        "turn usage (a total over the turn's requests)": 1,
    }
    census = added_up(transcript)
    assert sum(census.read.values()) == len(events)
    assert census.read["item.completed command_execution"] == 3
    assert census.read["turn.started"] == 1
