"""Every format of `ctxlab.FORMATS` has its census checked: a file of it (a fixture, or a small
document written here for the formats that are a list of messages) loads with a census that adds
up and whose records read equal the test's own count of the file's records — json lines,
top-level list lengths, a task's two files, a storage's files, Markdown headers —, counted here
without the importers' code. The cases are keyed by format and the test runs over the registry:
a new format fails until it is given a case. Then Hypothesis mutates each single-file fixture:
a load raises a ctxlab error or yields a census that adds up."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import CtxlabError, load
from ctxlab.io import FORMATS
from tests.io.mutate import cut, mutated
from tests.io.test_census_fixtures import CASES as OLDER_CASES
from tests.strategies import SETTINGS

FIXTURES = Path(__file__).parents[1] / "fixtures"


@dataclass(frozen=True)
class Case:
    """A source of one format and the test's own count of its records."""

    source: Path | Any
    count: Callable[[], int]
    label: str

    def load(self, format: str) -> Any:
        return load(self.source, format=format)  # type: ignore[arg-type]


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def _file(path: Path, count: Callable[[Path], int]) -> Case:
    return Case(path, lambda: count(path), str(path.relative_to(FIXTURES)))


def _data(label: str, data: Any, count: int) -> Case:
    return Case(data, lambda: count, label)


# --- the test's own counts, one per format ---


def _cline(task: Path) -> int:
    # Both files of the task: every item of the API history and every UI message.
    return sum(
        len(_json(task / name)) for name in ("api_conversation_history.json", "ui_messages.json")
    )


def _letta(path: Path) -> int:
    document = _json(path)
    if "agents" in document:  # v2: every agent's messages
        return sum(len(agent.get("messages") or ()) for agent in document["agents"])
    return len(document["messages"])


def _autogen(path: Path) -> int:
    # Every list of messages in the state: each llm_context, each buffer, each team thread.
    total = 0

    def walk(value: Any, key: str = "") -> None:
        nonlocal total
        if isinstance(value, dict):
            for name, item in value.items():
                held = name in ("message_buffer", "message_thread") or (
                    name == "messages" and key == "llm_context"
                )
                if held and isinstance(item, list):
                    total += len(item)
                else:
                    walk(item, name)

    walk(_json(path))
    return total


def _opencode_export(path: Path) -> int:
    document = _json(path)
    return 1 + sum(1 + len(m["parts"]) for m in document["messages"])  # info, messages, parts


def _opencode_storage(session: Path) -> int:
    # The session file, its message files, and the part files of those messages.
    storage = session.parents[2]
    messages = sorted((storage / "message" / session.stem).glob("*.json"))
    parts = sum(len(list((storage / "part" / m.stem).glob("*.json"))) for m in messages)
    return 1 + len(messages) + parts


def _goose_export(path: Path) -> int:
    return 1 + len(_json(path)["conversation"])  # the session, then its messages


_HEADER = re.compile(r"^_\*\*(User|Assistant|Agent)\b.*\*\*_\s*$|^_\*\*\*\*_\s*$")


def _specstory(path: Path) -> int:
    # A section a header (outside code blocks and <tool-use> elements, whose bodies hold code
    # opened mid-line), and the preamble when text comes before the first header. SpecStory
    # closes a fetched rule's block with the marks glued to its last line.
    headers, fence, before, tool = 0, False, False, False
    for line in path.read_text().splitlines():
        if "<tool-use" in line or tool:
            tool = "</tool-use>" not in line.split("<tool-use", 1)[-1]
        elif line.lstrip().startswith(("```", "~~~")) or (fence and line.endswith("```")):
            fence = not fence
        elif not fence and _HEADER.match(line):
            headers += 1
            continue
        before = before or (headers == 0 and bool(line.strip()))
    return headers + before


def _saved(tmp: Path) -> Case:
    # A transcript saved by ctxlab: a meta line and a line a message.
    path = tmp / "saved.jsonl"
    load(FIXTURES / "goose" / "export.json").save(path)
    return _file_outside(path, _lines)


def _file_outside(path: Path, count: Callable[[Path], int]) -> Case:
    return Case(path, lambda: count(path), path.name)


# --- small documents of the formats that are a list of messages ---

_CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
ANTHROPIC = [
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.py"}]},
    {"role": "assistant", "content": "One file: a.py."},
]
OPENAI = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": None, "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    {"role": "assistant", "content": "One file: a.py."},
]
RESPONSES = [
    {"type": "message", "role": "user", "content": "List the files."},
    {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.py"}]},
]
LANGCHAIN = [
    {"type": "system", "data": {"content": "Be brief."}},
    {"type": "human", "data": {"content": "List the files."}},
    {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "ls", "args": {}}]}},
    {"type": "tool", "data": {"content": "a.py", "tool_call_id": "c1"}},
    {"type": "ai", "data": {"content": "One file: a.py."}},
]
PYDANTIC_AI = [
    {
        "kind": "request",
        "parts": [
            {"part_kind": "system-prompt", "content": "Be brief."},
            {"part_kind": "user-prompt", "content": "List the files."},
        ],
    },
    {
        "kind": "response",
        "parts": [
            {"part_kind": "text", "content": "Listing."},
            {"part_kind": "tool-call", "tool_name": "ls", "args": {}, "tool_call_id": "c1"},
        ],
    },
    {
        "kind": "request",
        "parts": [
            {"part_kind": "tool-return", "tool_name": "ls", "content": "a.py", "tool_call_id": "c1"}
        ],
    },
]
GEMINI = [
    {"role": "user", "parts": [{"text": "List the files."}]},
    {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": "a"}}}]},
    {"role": "model", "parts": [{"text": "One file: a.py."}]},
]
SWE_AGENT = {
    "history": [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "Looking.\n```\nls\n```", "action": "ls\n"},
        {"role": "user", "content": "a.py"},
        {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "action": "submit\n"},
    ],
    "trajectory": [
        {"action": "ls\n", "observation": "a.py", "response": "Looking."},
        {"action": "submit\n", "observation": "", "response": "Done."},
    ],
}
TAU_BENCH = [
    {"task_id": 0, "trial": 0, "reward": 1.0, "traj": OPENAI},
    {"task_id": 1, "trial": 0, "reward": 0.0, "traj": OPENAI[:2]},
]

_FOLDER_OF = {
    "codex": "codex",
    "claude_code": "sessions",
    "copilot": "copilot",
    "gemini_cli": "gemini",
    "openhands": "openhands",
    "mini_swe_agent": "mini_swe_agent",
    "inspect": "inspect",
    "aider": "aider",
    "otel": ("vercel_ai", "langfuse", "openai_agents", "openllmetry"),
}


def _older(format: str) -> list[Case]:
    # The formats whose fixtures test_census_fixtures already counts (its own parsers).
    folders = _FOLDER_OF[format]
    folders = (folders,) if isinstance(folders, str) else folders
    return [
        Case(path, lambda e=expected, p=path: e(p)[0], str(path.relative_to(FIXTURES)))
        for path, expected in OLDER_CASES
        if path.relative_to(FIXTURES).parts[0] in folders
    ]


CLINE = FIXTURES / "cline"
OPENCODE = FIXTURES / "opencode"
SPECSTORY = sorted((FIXTURES / "specstory").glob("*.md"))
SPECSTORY = [p for p in SPECSTORY if p.name != "README.md"]
CASES: dict[str, Callable[[Path], list[Case]]] = {
    **{f: (lambda _, f=f: _older(f)) for f in _FOLDER_OF},
    "ctxlab": lambda tmp: [_saved(tmp)],
    "anthropic": lambda _: [_data("anthropic messages", ANTHROPIC, len(ANTHROPIC))],
    "openai": lambda _: [_data("openai messages", OPENAI, len(OPENAI))],
    "openai_responses": lambda _: [_data("responses items", RESPONSES, len(RESPONSES))],
    "langchain": lambda _: [_data("langchain dicts", LANGCHAIN, len(LANGCHAIN))],
    "pydantic_ai": lambda _: [
        _data("pydantic_ai messages", PYDANTIC_AI, sum(len(m["parts"]) for m in PYDANTIC_AI))
    ],
    "gemini": lambda _: [_data("gemini contents", GEMINI, len(GEMINI))],
    "swe_agent": lambda _: [
        _data("swe-agent trajectory", SWE_AGENT, len(SWE_AGENT["history"]) + 2)
    ],
    # The first episode's messages, and each other episode as one record.
    "tau_bench": lambda _: [_data("tau-bench episodes", TAU_BENCH, len(OPENAI) + 1)],
    "cline": lambda _: [
        _file(task, _cline) for task in sorted(CLINE.glob("*/tasks/*")) if task.is_dir()
    ],
    "continue": lambda _: [
        _file(p, lambda p: len(_json(p)["history"]))
        for p in sorted((FIXTURES / "continue" / "sessions").glob("*-*.json"))
    ],
    "codex_exec": lambda _: [
        _file(p, _lines) for p in sorted((FIXTURES / "codex_exec").glob("*.jsonl"))
    ],
    "gemini_stream": lambda _: [_file(FIXTURES / "gemini_stream" / "stream-json.jsonl", _lines)],
    "letta": lambda _: [_file(p, _letta) for p in sorted((FIXTURES / "letta").glob("*.af"))],
    "autogen": lambda _: [
        _file(p, _autogen) for p in sorted((FIXTURES / "autogen").glob("*.json"))
    ],
    "smolagents": lambda _: [
        _file(p, lambda p: len(_json(p))) for p in sorted((FIXTURES / "smolagents").glob("*.json"))
    ],
    "opencode": lambda _: [
        _file(OPENCODE / "export.json", _opencode_export),
        _file(next((OPENCODE / "storage" / "session").glob("*/*.json")), _opencode_storage),
    ],
    "goose": lambda _: [
        _file(FIXTURES / "goose" / "20250514_103000.jsonl", _lines),
        _file(FIXTURES / "goose" / "export.json", _goose_export),
    ],
    "specstory": lambda _: [_file(p, _specstory) for p in SPECSTORY],
    "atif": lambda _: [
        _file(p, lambda p: len(_json(p)["steps"]))
        for p in sorted((FIXTURES / "atif").glob("*.json"))
    ],
}
"""The census cases of each format (given a folder for what a case must write)."""


@pytest.mark.parametrize("format", FORMATS)
def test_every_format_loads_with_a_census_that_adds_up_to_the_files_own_count(
    format: str, tmp_path: Path
) -> None:
    assert format in CASES, f"format {format!r} has no census case: add one to CASES"
    cases = CASES[format](tmp_path)
    assert cases, f"format {format!r}: no fixture found"
    for case in cases:
        transcript = case.load(format)
        census = transcript.census
        assert census is not None, case.label
        assert census.adds_up, (case.label, census.problems())
        assert census.unaccounted == {}, case.label
        assert sum(census.read.values()) == case.count(), (case.label, census.read)
        assert census.used, case.label  # something of the file became the transcript
        assert census.usage_placed == len(transcript.usage), case.label
        assert census.messages == len(transcript.messages), case.label


def test_a_dropped_record_is_caught_by_the_count() -> None:
    # The control: the same count against a file with one record fewer is not met.
    path = FIXTURES / "codex_exec" / "exec-0.60.jsonl"
    lines = path.read_text().splitlines()
    with tempfile.TemporaryDirectory() as folder:
        shorter = Path(folder) / path.name
        shorter.write_text("\n".join(lines[:-1]) + "\n")
        census = load(shorter, format="codex_exec").census
    assert census is not None and sum(census.read.values()) == _lines(path) - 1


# --- Hypothesis: each single-file fixture, mutated ---

_DOCUMENTS = [
    (format, case.source)
    for format in ("continue", "letta", "autogen", "smolagents", "opencode", "goose")
    for case in CASES[format](FIXTURES)
    if isinstance(case.source, Path)
    and case.source.suffix in (".json", ".af")
    and "storage" not in case.source.parts
]
_LINE_FILES = [
    ("codex_exec", FIXTURES / "codex_exec" / "exec-0.60.jsonl"),
    ("codex_exec", FIXTURES / "codex_exec" / "exec-0.30.jsonl"),
    ("gemini_stream", FIXTURES / "gemini_stream" / "stream-json.jsonl"),
    ("goose", FIXTURES / "goose" / "20250514_103000.jsonl"),
]


def _census_adds_up_or_refused(path: Path, format: str) -> None:
    try:
        transcript = load(path, format=format)  # type: ignore[arg-type]
    except CtxlabError as exc:
        assert str(exc).strip()
        return
    census = transcript.census
    assert census is not None and census.adds_up, census and census.problems()
    # Every record is used or skipped; a mutation may put usage, a call or reasoning where the
    # reader does not look — the inventory then names it unaccounted, by kind and path.
    assert census.unaccounted_records() == {}
    assert all(k.partition(" at ")[2].startswith("$") for k in census.unaccounted)


@SETTINGS
@given(st.data(), st.sampled_from(_DOCUMENTS))
def test_a_mutated_document_loads_with_a_census_that_adds_up_or_a_typed_error(
    data: st.DataObject, case: tuple[str, Path]
) -> None:
    format, path = case
    changed = data.draw(mutated(_json(path)))
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / path.name
        target.write_text(json.dumps(changed))
        _census_adds_up_or_refused(target, format)


@SETTINGS
@given(st.data(), st.sampled_from(_LINE_FILES))
def test_a_mutated_line_file_loads_with_a_census_of_every_line_or_a_typed_error(
    data: st.DataObject, case: tuple[str, Path]
) -> None:
    format, path = case
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    changed = data.draw(mutated(lines))
    changed = changed if isinstance(changed, list) else [changed]
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / path.name
        target.write_text("".join(json.dumps(line) + "\n" for line in changed))
        _census_adds_up_or_refused(target, format)
        try:
            census = load(target, format=format).census  # type: ignore[arg-type]
        except CtxlabError:
            return
    assert census is not None and sum(census.read.values()) == len(changed)


@SETTINGS
@given(st.data(), st.sampled_from(SPECSTORY))
def test_cut_or_spliced_markdown_loads_with_a_census_that_adds_up(
    data: st.DataObject, path: Path
) -> None:
    text = path.read_text()
    other = data.draw(st.sampled_from(SPECSTORY)).read_text()
    changed = data.draw(cut(text)) + data.draw(st.sampled_from(["", other[len(other) // 2 :]]))
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / path.name
        target.write_text(changed)
        _census_adds_up_or_refused(target, "specstory")


# --- what a fixture does not hold ---


def test_a_record_whose_blocks_are_all_dropped_is_skipped_not_unaccounted() -> None:
    # An AutoGen result message whose results name no call: every block left out, the message
    # skipped for it (Hypothesis found it unaccounted once).
    state = _json(FIXTURES / "autogen" / "coder_state.json")
    messages = state["llm_context"]["messages"]
    results = next(m for m in messages if m["type"] == "FunctionExecutionResultMessage")
    for result in results["content"]:
        result["call_id"] = ""
    census = load(state, format="autogen").census
    assert census is not None and census.adds_up, census and census.problems()
    assert census.skipped == {"message with nothing kept": 1}
    assert census.left_out["tool result without a call id"] == len(results["content"])
    assert sum(census.read.values()) == len(messages)


def test_a_failed_replys_billed_step_is_counted_lost() -> None:
    # OpenCode does not send a failed reply again; a step of it that was billed is read, and
    # its usage lost — said, not dropped.
    export = _json(OPENCODE / "export.json")
    failed = next(
        m for m in export["messages"] if m["info"].get("error", {}).get("name") == "APIError"
    )
    tokens = {"input": 900, "output": 3, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    failed["parts"].append({"type": "step-finish", "tokens": tokens})
    census = load(export, format="opencode").census
    assert census is not None and census.adds_up, census and census.problems()
    assert census.usage_lost == {"part of a failed reply: its step's usage": 1}
    assert census.usage_read == census.usage_placed + 1
    assert sum(census.read.values()) == 1 + sum(1 + len(m["parts"]) for m in export["messages"])
