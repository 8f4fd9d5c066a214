"""Each of the sessions users keep is told from every other format by its content (or, for a
task folder or OpenCode's storage, by where it lives), and a folder holding all of them lists one
row per session, each with its format and none with a problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ctxlab
from ctxlab import load
from ctxlab.io._detect import detect_lines
from ctxlab.io._files import read_records

FIXTURES = Path(__file__).parents[1] / "fixtures"
KILO_XML = FIXTURES / "cline/kilocode.kilo-code/tasks/1754000000000/api_conversation_history.json"
SESSIONS = {
    "cline": [
        FIXTURES
        / "cline"
        / "saoudrizwan.claude-dev"
        / "tasks"
        / "1770000000000"
        / "api_conversation_history.json",
        FIXTURES
        / "cline"
        / "rooveterinaryinc.roo-cline"
        / "tasks"
        / "0199aa10-roo-task"
        / "api_conversation_history.json",
        KILO_XML,
    ],
    "continue": [FIXTURES / "continue" / "sessions" / "7c1e2a4b-5d6f-4a8b-9c0d-1e2f3a4b5c6d.json"],
    "codex_exec": [
        FIXTURES / "codex_exec" / "exec-0.60.jsonl",
        FIXTURES / "codex_exec" / "exec-0.30.jsonl",
    ],
    "gemini_stream": [FIXTURES / "gemini_stream" / "stream-json.jsonl"],
    "letta": sorted((FIXTURES / "letta").glob("*.af")),
    "autogen": sorted((FIXTURES / "autogen").glob("*.json")),
    "smolagents": sorted((FIXTURES / "smolagents").glob("*.json")),
    "opencode": [
        FIXTURES / "opencode" / "export.json",
        *(FIXTURES / "opencode" / "storage" / "session").glob("*/*.json"),
    ],
    "goose": [
        FIXTURES / "goose" / "20250514_103000.jsonl",
        FIXTURES / "goose" / "export.json",
        FIXTURES / "goose" / "tools_line" / "sample_session.jsonl",
    ],
    "specstory": sorted(p for p in (FIXTURES / "specstory").glob("*.md") if p.name != "README.md"),
}
CASES = [(kind, path) for kind, paths in SESSIONS.items() for path in paths]
# The formats that were there before: each fixture must still read as what it is.
OLDER = {
    "codex": FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl",
    "gemini_cli": FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl",
    "copilot": next((FIXTURES / "copilot" / "session-state").glob("*/events.jsonl")),
    "openhands": FIXTURES / "openhands" / "trajectory.json",
    "mini_swe_agent": FIXTURES / "mini_swe_agent" / "toolcalls.traj.json",
    "inspect": FIXTURES / "inspect" / "add.json",
    "aider": FIXTURES / "aider" / ".aider.chat.history.md",
    "claude_code": FIXTURES / "sessions" / "claude_code_session.jsonl",
}


@pytest.mark.parametrize(
    ("kind", "path"), CASES + list(OLDER.items()), ids=lambda v: getattr(v, "name", v)
)
def test_each_session_reads_as_its_own_format(kind: str, path: Path) -> None:
    assert load(path).meta["source"] == kind


# Known by where they live, not by content: the XML-era Kilo history is plain Anthropic messages,
# and OpenCode's stored session file holds only the session's info.
BY_PLACE = {
    KILO_XML,
    *(FIXTURES / "opencode" / "storage" / "session").glob("*/*.json"),
}


@pytest.mark.parametrize(
    ("kind", "path"),
    [c for c in CASES if c[1].suffix != ".md" and c[1] not in BY_PLACE],
    ids=lambda v: getattr(v, "name", v),
)
def test_its_content_alone_says_its_format(kind: str, path: Path) -> None:
    read = read_records(path)
    lines, document = read.records, read.document
    # A list of messages or steps is judged whole; a stream by its first line.
    data = document if lines == [] else [value for _, value in lines]
    if path.parent.name == "tools_line":
        # Its first line (tool schemas) says nothing: its message lines say Goose.
        assert detect_lines(lines) == kind
        return
    first = data if lines == [] or kind in ("cline", "smolagents") else data[0]
    assert ctxlab.io.detect_format(first) == kind


def test_a_folder_of_every_format_lists_one_row_per_session(tmp_path: Path) -> None:
    for kind in SESSIONS:
        shutil.copytree(
            FIXTURES / kind,
            tmp_path / kind,
            ignore=shutil.ignore_patterns("*.py", "README.md", "LICENSE"),
        )
    (tmp_path / "cline" / "notes.md").write_text("# not a chat\n")
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    problems = frame[frame["problem"].notna()]
    # Gemini CLI's --output-format json holds no conversation: its row says what to record.
    assert [Path(p).name for p in problems["path"]] == ["output.json"]
    assert "stream-json" in problems["problem"].iloc[0]
    expected = {kind: len(paths) for kind, paths in SESSIONS.items()}
    assert frame["format"].value_counts().to_dict() == expected
