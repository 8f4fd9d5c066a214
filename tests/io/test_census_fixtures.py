"""Every fixture's census against the test's own reading of the file: the records it holds, its
tool calls and its billed requests (each counted here by a few lines of parsing of that format,
not by ctxlab's code) — and every fixture replayed at 200k and 32k, every request valid."""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import CtxlabError, load
from ctxlab.io import Census
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import request_start
from tests.helpers import validations
from tests.strategies import SETTINGS, any_text, json_value

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _codex(path: Path) -> tuple[int, int, list[int]]:
    lines = _lines(path)
    calls = sum(
        1
        for x in lines
        if x["type"] == "response_item"
        and x["payload"]["type"] in ("function_call", "custom_tool_call", "local_shell_call")
    )
    infos: list[Any] = []
    for x in lines:
        count = x["type"] == "event_msg" and x["payload"]["type"] == "token_count"
        info = x["payload"].get("info") if count else None
        # A repeat of the previous (sent again with the next request's rate limits) is not new.
        if isinstance(info, dict) and "last_token_usage" in info and info not in infos[-1:]:
            infos.append(info)
    return len(lines), calls, [i["last_token_usage"]["output_tokens"] for i in infos]


def _claude_code(path: Path) -> tuple[int, int, list[int] | None]:
    lines = _lines(path)
    main = [x for x in lines if x.get("type") == "assistant" and not x.get("isSidechain")]
    calls = {
        b["id"]
        for x in main
        for b in x["message"].get("content") or ()
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    # Which line's usage stands for a response is the engine's choice (issue 37): count them.
    return len(lines), len(calls), None


def _copilot(path: Path) -> tuple[int, int, list[int]]:
    events = _lines(path)
    main = [e for e in events if not e.get("agentId")]
    calls = sum(
        len(e["data"].get("toolRequests") or ()) for e in main if e["type"] == "assistant.message"
    )
    # Each call's usage where the file keeps it (older CLIs), else each reply's output count.
    usage = [e for e in main if e["type"] == "assistant.usage"]
    replies = [e for e in main if e["type"] == "assistant.message"]
    billed = usage or [e for e in replies if "outputTokens" in e["data"]]
    return len(events), calls, [e["data"]["outputTokens"] for e in billed]


def _gemini(path: Path) -> tuple[int, int, list[int]]:
    # The records in force: a later line of the same id replaces, $rewindTo drops from there.
    raw = _lines(path) if path.suffix == ".jsonl" else [json.loads(path.read_text())]
    records: dict[str, Any] = {}
    count = 0
    for line in raw:
        count += 1
        if "$rewindTo" in line:
            ids = list(records)
            for gone in ids[ids.index(line["$rewindTo"]) :]:
                del records[gone]
        elif "sessionId" in line:
            for message in line.get("messages") or ():
                count += 1
                records[message["id"]] = message
        elif "id" in line:
            records[line["id"]] = line
    replies = [r for r in records.values() if r["type"] == "gemini"]
    calls = sum(len(r.get("toolCalls") or ()) for r in replies)
    outputs = [r["tokens"]["output"] for r in replies if "tokens" in r]
    return count, calls, outputs


def _openhands(path: Path) -> tuple[int, int, list[int]]:
    lines = _lines(path) if path.suffix == ".jsonl" else [json.loads(path.read_text())]
    events = lines[0]["history"] if isinstance(lines[0], dict) else lines[0]
    others = len(lines) - 1 if isinstance(lines[0], dict) else 0
    actions = [e for e in events if "action" in e and e.get("tool_call_metadata")]
    responses: dict[str, int] = {}
    for e in actions:
        response = e["tool_call_metadata"]["model_response"]
        responses.setdefault(response["id"], response["usage"]["completion_tokens"])
    return len(events) + others, len(actions), list(responses.values())


def _openhands_v1(path: Path) -> tuple[int, int, list[int]]:
    events = [json.loads(p.read_text()) for p in sorted((path / "events").glob("event-*.json"))]
    state = json.loads((path / "base_state.json").read_text())
    usage = {
        u["response_id"]: u["completion_tokens"]
        for m in state["stats"]["usage_to_metrics"].values()
        for u in m["token_usages"]
    }
    replies = list(dict.fromkeys(e["llm_response_id"] for e in events if e.get("llm_response_id")))
    calls = sum(e["kind"] == "ActionEvent" for e in events)
    return len(events), calls, [usage[r] for r in replies]


def _openhands_log(path: Path) -> tuple[int, int, list[int]]:
    log = json.loads(path.read_text())
    # Prompted function calling logs the call twice: as text (``messages``) and with its tool
    # calls (V1 ``raw_messages``, V0 ``fncall_messages``), and each reply likewise.
    sent = log.get("raw_messages") or log.get("fncall_messages") or log["messages"]
    response = log.get("fncall_response") or log["response"]
    reply = response["choices"][0]["message"]
    calls = sum(len(m.get("tool_calls") or ()) for m in [*sent, reply])
    records = len(sent) + 1 + (len(log["messages"]) + 1 if sent is not log["messages"] else 0)
    return records, calls, [response["usage"]["completion_tokens"]]


def _mini(path: Path) -> tuple[int, int | None, list[int]]:
    messages = json.loads(path.read_text())
    messages = messages["messages"] if isinstance(messages, dict) else messages
    outputs = [
        m["extra"]["response"]["usage"]["completion_tokens"]
        for m in messages
        if m["role"] == "assistant" and "response" in (m.get("extra") or {})
    ]
    calls = sum(len(m.get("tool_calls") or ()) for m in messages)
    return len(messages), calls or None, outputs  # text-based calls are parsed from the reply


def _inspect(path: Path) -> tuple[int, int, list[int]]:
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
        first = json.loads((FIXTURES / "inspect" / "add.json").read_text())["samples"][0]
        samples = len(names)
    else:
        log = json.loads(path.read_text())
        first, samples = log["samples"][0], len(log["samples"])
    calls = sum(len(m.get("tool_calls") or ()) for m in first["messages"])
    outputs = [
        e["output"]["usage"]["output_tokens"] for e in first["events"] if e["event"] == "model"
    ]
    return len(first["messages"]) + len(first["events"]) + samples - 1, calls, outputs


def _aider(path: Path) -> tuple[int, int, list[int]]:
    text = path.read_text()
    first_run = text.split("# aider chat started at")[1]
    tokens = [line for line in first_run.splitlines() if line.startswith("> Tokens:")]
    received = [int(line.split(" received")[0].rsplit(" ", 1)[-1]) for line in tokens]
    return len(text.splitlines()), 0, received


def _spans(path: Path) -> tuple[int, None, None]:
    # Spans, whatever the export's shape (OTLP body, SDK span JSON, the Agents SDK's items).
    data = json.loads(path.read_text())
    if isinstance(data, dict) and "resourceSpans" in data:
        count = sum(len(scope["spans"]) for r in data["resourceSpans"] for scope in r["scopeSpans"])
    elif isinstance(data, dict) and "data" in data:
        count = sum(1 for item in data["data"] if "span_data" in item)
    else:
        count = len(data)
    return count, None, None


Expected = Callable[[Path], tuple[int, int | None, list[int] | None]]
CODEX = FIXTURES / "codex"
V1 = FIXTURES / "openhands" / "v1"
V0 = FIXTURES / "openhands" / "v0"
CASES: list[tuple[Path, Expected]] = [
    *((p, _codex) for p in sorted(CODEX.glob("rollout-*.jsonl"))),
    (FIXTURES / "sessions" / "claude_code_session.jsonl", _claude_code),
    *((p, _copilot) for p in sorted((FIXTURES / "copilot" / "session-state").glob("*/*.jsonl"))),
    (FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl", _gemini),
    (FIXTURES / "gemini" / "session-legacy.json", _gemini),
    (FIXTURES / "openhands" / "output.jsonl", _openhands),
    (FIXTURES / "openhands" / "trajectory.json", _openhands),
    (next((V1 / "conversation").iterdir()), _openhands_v1),
    *((p, _openhands_log) for p in sorted((V1 / "logs").glob("*.json"))),
    *((p, _openhands_log) for p in sorted((V0 / "llm_completions").glob("*/*.json"))),
    (FIXTURES / "mini_swe_agent" / "toolcalls.traj.json", _mini),
    (FIXTURES / "mini_swe_agent" / "textbased.traj.json", _mini),
    (FIXTURES / "inspect" / "add.json", _inspect),
    (FIXTURES / "inspect" / "add.eval", _inspect),
    (FIXTURES / "aider" / ".aider.chat.history.md", _aider),
    (FIXTURES / "vercel_ai" / "vercel_ai_otlp.json", _spans),
    (FIXTURES / "langfuse" / "langfuse_spans.json", _spans),
    (FIXTURES / "openai_agents" / "chat_trace.json", _spans),
    (FIXTURES / "openllmetry" / "openai_spans.json", _spans),
]
IDS = [str(p.relative_to(FIXTURES))[-48:] for p, _ in CASES]


@pytest.mark.parametrize(("path", "expected"), CASES, ids=IDS)
def test_the_census_adds_up_and_matches_the_files_own_count(path: Path, expected: Expected) -> None:
    transcript = load(path)
    census = transcript.census
    assert census is not None
    assert census.adds_up, census.problems()
    assert census.unaccounted == {}
    records, calls, outputs = expected(path)
    assert sum(census.read.values()) == records, census.read
    assert census.used  # something of the file became the transcript
    if calls is not None:
        assert census.tool_calls == calls
    if outputs is not None:
        billed = [transcript.usage[i].output_tokens for i in sorted(transcript.usage)]
        assert billed == outputs
        assert census.usage_placed == len(outputs)
    # The census describes the transcript it came with.
    assert census.messages == len(transcript.messages)
    assert census.replies == sum(m.role == "assistant" for m in transcript.messages)


@pytest.mark.parametrize(("path", "expected"), CASES, ids=IDS)
@pytest.mark.parametrize("window", [200_000, 32_000])
async def test_every_fixture_replays_with_every_request_valid(
    path: Path, expected: Expected, window: int
) -> None:
    transcript = load(path)
    steps = await validations(transcript, window)
    start = request_start(transcript.messages)
    assert len(steps) == sum(m.role == "assistant" for m in transcript.messages[start:]) > 0
    assert set(steps) == {"passed"}


def test_a_census_that_does_not_add_up_is_caught() -> None:
    # The control: a census with a record neither used nor skipped, or a usage unexplained.
    good = load(FIXTURES / "codex" / "rollout-current-usage-after.jsonl").census
    assert good is not None and good.adds_up
    data = good.as_meta()
    lost = Census.from_meta({**data, "read": {**data["read"], "response_item message": 99}})
    assert lost is not None and not lost.adds_up
    unexplained = Census.from_meta({**data, "usage_read": data["usage_read"] + 1})
    assert unexplained is not None and not unexplained.adds_up


RAW = corpus_dir() / "raw"
RAW_FILES = (
    sorted(
        p
        for p in RAW.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json", ".traj") and "_extra" not in p.parts
    )
    if RAW.is_dir()
    else []
)


@pytest.mark.skipif(not RAW_FILES, reason="the raw corpus is not here: set CTXLAB_CORPUS")
def test_every_real_session_of_the_corpus_loads_with_a_census_that_adds_up() -> None:
    for path in RAW_FILES:
        census = load(path).census
        assert census is not None and census.adds_up, (path, census and census.problems())
        if path.suffix == ".jsonl":  # a line a record: the file's own count
            lines = sum(1 for line in path.read_text().splitlines() if line.strip())
            assert sum(census.read.values()) == lines, path


LINE_FILES = [
    FIXTURES / "codex" / "rollout-0.58.0-usage-before.jsonl",
    FIXTURES / "sessions" / "claude_code_session.jsonl",
    next((FIXTURES / "copilot" / "session-state").glob("*/events.jsonl")),
]


@SETTINGS
@given(
    st.sampled_from(LINE_FILES),
    st.lists(st.integers(0, 40), max_size=30),
    st.lists(
        st.tuples(st.integers(0, 40), st.dictionaries(any_text, json_value, max_size=3)), max_size=3
    ),
)
def test_any_mutation_of_a_line_file_loads_with_a_census_of_every_line_or_a_typed_error(
    path: Path, order: list[int], inserted: list[tuple[int, Any]]
) -> None:
    # Lines dropped, repeated, reordered, and foreign objects put among them.
    lines = path.read_text().splitlines()
    kept = [lines[i % len(lines)] for i in order] or lines[:1]
    for at, value in inserted:
        kept.insert(at % (len(kept) + 1), json.dumps(value))
    with tempfile.TemporaryDirectory() as folder:
        mutated = Path(folder) / path.name
        mutated.write_text("\n".join(kept) + "\n")
        try:
            transcript = load(mutated, format=_FORMAT[path.parent.name])
        except CtxlabError as exc:
            assert str(exc).strip()
            return
    census = transcript.census
    assert census is not None and census.adds_up, census and census.problems()
    assert sum(census.read.values()) == len(kept)


_FORMAT = {"codex": "codex", "sessions": "claude_code"}
_FORMAT.update({p.parent.name: "copilot" for p in LINE_FILES if "copilot" in p.parts})
