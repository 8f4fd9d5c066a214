"""A JSON Lines session with a few lines that are not JSON — a line damaged in the middle, a
stray line of a tool's log — loads whole without them, each counted in the census and named by
its number, for every JSON Lines format ctxlab reads (every JSON Lines seed of the fuzz harness:
the real fixtures of Claude Code, Codex, Copilot, Gemini CLI, Goose, ... and ctxlab's own). A
file most of whose lines are not JSON — another kind of file, a session damaged beyond a few
lines — is still refused, naming its first such line and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io._files import read_records
from ctxlab.util._jsonl import MOST_NOT_JSON
from tests.fuzz.seeds import seed_files
from tests.hostile import says
from tests.io.shown import added_up
from tests.strategies import SETTINGS

# Python's str.splitlines breaks at these as well as at "\n": a garbage line holds none.
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return bool(text.strip())
    return False


garbage = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters=_BREAKS), min_size=1, max_size=30
).filter(_not_json)


@pytest.fixture(scope="module")
def jsonl_seeds(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every seed file of the fuzz harness that is JSON Lines (of several records)."""
    found: list[Path] = []
    for paths in seed_files(tmp_path_factory.mktemp("seeds")).values():
        for path in paths:
            try:
                read = read_records(path)
            except MessageFormatError:  # not JSON (aider's, SpecStory's Markdown, a zip)
                continue
            if len(read.records) >= 3 and read.document is None:
                found.append(path)
    return found


def test_the_seeds_cover_the_json_lines_formats(jsonl_seeds: list[Path]) -> None:
    formats = {load(p).meta.get("source", "ctxlab") for p in jsonl_seeds}
    assert {"claude_code", "codex", "copilot", "gemini_cli", "goose", "ctxlab"} <= formats


def _shape(path: Path, **kwargs: Any) -> tuple[Any, ...]:
    transcript = load(path, **kwargs)
    return (
        [m.model_dump() for m in transcript.messages],
        dict(transcript.usage),
        transcript.system,
        transcript.tools,
    )


def _with_garbage(path: Path, out: Path, inserted: dict[int, str]) -> list[int]:
    """``path``'s lines with ``inserted`` lines before line index k; the numbers the inserted
    lines have in the new file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    result: list[str] = []
    numbers: list[int] = []
    for index, line in enumerate(lines):
        if index in inserted:
            result.append(inserted[index])
            numbers.append(len(result))
        result.append(line)
    out.write_text("\n".join(result) + "\n", encoding="utf-8")
    return numbers


@SETTINGS
@given(data=st.data())
def test_k_garbage_lines_load_the_same_session_and_are_named(
    jsonl_seeds: list[Path], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    path = data.draw(st.sampled_from(jsonl_seeds))
    lines = len(path.read_text(encoding="utf-8").splitlines())
    # As many as the rule allows: one line in MOST_NOT_JSON, or a single one.
    most = max(1, lines // (MOST_NOT_JSON - 1))
    positions = data.draw(st.sets(st.integers(0, lines - 1), min_size=1, max_size=most))
    inserted = {p: data.draw(garbage) for p in positions}
    out = tmp_path_factory.mktemp("garbage") / path.name
    numbers = _with_garbage(path, out, inserted)

    assert _shape(out) == _shape(path)
    transcript = load(out)
    named = transcript.meta["lines_not_json"]
    assert [entry["line"] for entry in named] == numbers
    assert all(entry["reason"] for entry in named)
    census = added_up(transcript)
    for number in numbers:
        assert census.skipped[f"line {number} not JSON"] == 1
        assert transcript.meta["skipped"][f"line {number} not JSON"] == 1
    assert census.read["line not JSON"] == len(numbers)
    original = load(path).census
    assert original is not None
    assert sum(census.read.values()) == sum(original.read.values()) + len(numbers)


def test_a_garbage_line_in_a_claude_code_session_is_named_in_its_sessions_row(
    tmp_path: Path,
) -> None:
    from ctxlab import sessions

    source = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    out = tmp_path / "s.jsonl"
    (number,) = _with_garbage(source, out, {2: "<<<<<<< HEAD"})
    frame = sessions(tmp_path, progress=False, workers=1)
    (row,) = frame[frame.episode == 0].itertuples()
    assert row.problem is None and row.format == "claude_code"
    assert row.messages == len(load(source).messages)
    assert row.skipped == sum(load(source).meta.get("skipped", {}).values()) + 1
    assert load(out).meta["lines_not_json"][0]["line"] == number == 3


def test_a_subagents_own_file_names_its_garbage_line(tmp_path: Path) -> None:
    import shutil

    fixture = Path(__file__).parents[1] / "fixtures" / "claude_code"
    copy = tmp_path / "claude_code"
    shutil.copytree(fixture, copy)
    (agent,) = copy.rglob("agent-*.jsonl")
    original = load(next(copy.glob("*.jsonl")), episode=1)
    (number,) = _with_garbage(agent, agent, {1: "not json at all"})
    transcript = load(next(copy.glob("*.jsonl")), episode=1)
    assert [m.model_dump() for m in transcript.messages] == [
        m.model_dump() for m in original.messages
    ]
    assert transcript.meta["lines_not_json"] == [{"line": number, "reason": "Expecting value"}]
    assert transcript.census is not None and transcript.census.adds_up


def test_a_ctxlab_file_names_its_garbage_line(tmp_path: Path) -> None:
    from ctxlab import load_transcript

    seed = seed_files(tmp_path / "seeds")["ctxlab"][-1]
    out = tmp_path / "own.jsonl"
    (number,) = _with_garbage(seed, out, {2: "garbage"})
    transcript = load_transcript(out)
    assert [m.model_dump() for m in transcript.messages] == [
        m.model_dump() for m in load_transcript(seed).messages
    ]
    assert transcript.usage == load_transcript(seed).usage
    assert transcript.meta["lines_not_json"] == [{"line": number, "reason": "Expecting value"}]
    census = added_up(transcript)
    assert census.skipped == {f"line {number} not JSON": 1}


# --- what must still be refused ------------------------------------------------------------


def _session_lines(count: int) -> list[str]:
    said = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    return [json.dumps(said[k % 2]) for k in range(count)]


@pytest.mark.parametrize(("records", "bad"), [(18, 2), (20, 3), (1, 1), (5, 5), (0, 4)])
def test_more_than_one_line_in_ten_not_json_is_refused(
    tmp_path: Path, records: int, bad: int
) -> None:
    lines = _session_lines(records)
    for k in range(bad):
        lines.insert(min(1 + 2 * k, len(lines)), f"garbage {k}")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("garbage"))
    allowed = bad * MOST_NOT_JSON <= records + bad or (bad == 1 and records >= 2)
    if allowed:
        assert load(path).meta["lines_not_json"][0]["line"] == first
        return
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), f"line {first}: not JSON", "not a JSON Lines session")
    if records:  # a session damaged beyond a few lines: what to do
        says(str(caught.value), f"{bad} of its {records + bad} lines", "remove the lines")


@pytest.mark.parametrize(("records", "bad"), [(18, 2), (27, 3), (2, 1), (9, 1)])
def test_up_to_one_line_in_ten_loads(tmp_path: Path, records: int, bad: int) -> None:
    lines = _session_lines(records)
    for k in range(bad):
        lines.insert(1 + 2 * k, "}{")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path)
    assert len(transcript.meta["lines_not_json"]) == bad
    assert len(transcript.messages) == records


def test_a_markdown_file_is_not_read_as_a_damaged_session(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("# Notes\n\n" + "\n".join(f"- item {k}" for k in range(20)) + '\n{"a": 1}\n')
    with pytest.raises(MessageFormatError, match=r"line 1: not JSON .*not a JSON Lines session"):
        load(path)


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blob.jsonl"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(MessageFormatError, match="not UTF-8"):
        load(path)
    path.write_bytes(b"\x00\x01\x02\n" * 40 + b'{"role": "user", "content": "hi"}\n')
    with pytest.raises(MessageFormatError, match=r"line 1: not JSON"):
        load(path)
