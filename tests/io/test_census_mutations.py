"""The census of damaged files, and of what no fixture holds: every fixture of a contract
(`tests.io.contracts`) mutated by Hypothesis — records dropped, repeated, reordered, foreign
values put among them, a document's values changed, Markdown cut and spliced — loads with a
census that adds up or raises a ctxlab error; every real session of the corpus loads with one."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import CtxlabError, load
from ctxlab.io import Census
from ctxlab.io._transcript import corpus_dir
from tests.io.contracts import FIXTURES, contract
from tests.io.contracts.count import values
from tests.io.mutate import cut, mutated, mutated_or_cut
from tests.io.shown import added_up
from tests.strategies import SETTINGS, any_text, json_value


def _sources(formats: tuple[str, ...], suffixes: tuple[str, ...]) -> list[tuple[str, Path]]:
    # The contracts' fixture files of these formats with these endings (a storage's files
    # are one session of several: left to the contract).
    return [
        (format, case.source)
        for format in formats
        for case in contract(format) or ()
        if isinstance(case.source, Path)
        and case.source.suffix in suffixes
        and "storage" not in case.source.parts
    ]


_DOCUMENTS = _sources(
    ("continue", "letta", "autogen", "smolagents", "opencode", "goose"), (".json", ".af")
)
_LINE_FILES = _sources(("codex_exec", "gemini_stream", "goose"), (".jsonl",))
_SHUFFLED = [
    (format, path)
    for format, path in _sources(("codex", "claude_code", "copilot"), (".jsonl",))
    if format != "codex" or path.name == "rollout-0.58.0-usage-before.jsonl"
]
SPECSTORY = [path for _, path in _sources(("specstory",), (".md",))]


def _loaded(name: str, text: str, format: str, *, whole: bool = True) -> Census | None:
    """The census of ``text`` written to a file called ``name`` and loaded as ``format``:
    one that adds up (``whole``: and every record used or skipped), or None when the load
    raised a ctxlab error that says something."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / name
        target.write_text(text)
        try:
            transcript = load(target, format=format)  # type: ignore[arg-type]
        except CtxlabError as exc:
            assert str(exc).strip()
            return None
    census = added_up(transcript)
    if whole:
        # Every record is used or skipped; a mutation may put usage, a call or reasoning where
        # the reader does not look — the inventory then names it unaccounted, by kind and path.
        assert census.unaccounted_records() == {}
        assert all(k.partition(" at ")[2].startswith("$") for k in census.unaccounted)
    return census


def _mutated_fixture(data: st.DataObject, case: tuple[str, Path]) -> tuple[Census | None, Any]:
    """A contract fixture of a format (``case``) with its values mutated, written back as its
    kind of file (a document, or a record a line) and loaded: the census (`_loaded`) and the
    value written (for a line file, the list of its records)."""
    format, path = case
    lines = path.suffix == ".jsonl"
    found = values(path)
    changed = data.draw(mutated(found if lines else found[0]))
    if not lines:
        return _loaded(path.name, json.dumps(changed), format), changed
    changed = changed if isinstance(changed, list) else [changed]
    text = "".join(json.dumps(line) + "\n" for line in changed)
    return _loaded(path.name, text, format), changed


@SETTINGS
@given(st.data(), st.sampled_from(_DOCUMENTS))
def test_a_mutated_document_loads_with_a_census_that_adds_up_or_a_typed_error(
    data: st.DataObject, case: tuple[str, Path]
) -> None:
    _mutated_fixture(data, case)


@SETTINGS
@given(st.data(), st.sampled_from(_LINE_FILES))
def test_a_mutated_line_file_loads_with_a_census_of_every_line_or_a_typed_error(
    data: st.DataObject, case: tuple[str, Path]
) -> None:
    census, changed = _mutated_fixture(data, case)
    assert census is None or sum(census.read.values()) == len(changed)


@SETTINGS
@given(
    st.sampled_from(_SHUFFLED),
    st.lists(st.integers(0, 40), max_size=30),
    st.lists(
        st.tuples(st.integers(0, 40), st.dictionaries(any_text, json_value, max_size=3)), max_size=3
    ),
)
def test_any_shuffle_of_a_line_file_loads_with_a_census_of_every_line_or_a_typed_error(
    case: tuple[str, Path], order: list[int], inserted: list[tuple[int, Any]]
) -> None:
    # Lines dropped, repeated, reordered, and foreign objects put among them.
    format, path = case
    lines = path.read_text().splitlines()
    kept = [lines[i % len(lines)] for i in order] or lines[:1]
    for at, value in inserted:
        kept.insert(at % (len(kept) + 1), json.dumps(value))
    census = _loaded(path.name, "\n".join(kept) + "\n", format, whole=False)
    assert census is None or sum(census.read.values()) == len(kept)


@SETTINGS
@given(st.data(), st.sampled_from(SPECSTORY))
def test_cut_or_spliced_markdown_loads_with_a_census_that_adds_up(
    data: st.DataObject, path: Path
) -> None:
    text = path.read_text()
    other = data.draw(st.sampled_from(SPECSTORY)).read_text()
    changed = data.draw(cut(text)) + data.draw(st.sampled_from(["", other[len(other) // 2 :]]))
    _loaded(path.name, changed, "specstory")


_MUTATED_OR_CUT = {
    "codex_exec": [
        FIXTURES / "codex_exec" / "exec-0.60.jsonl",
        FIXTURES / "codex_exec" / "exec-0.30.jsonl",
    ],
    "gemini_stream": [FIXTURES / "gemini_stream" / "stream-json.jsonl"],
    "letta": [
        FIXTURES / "letta" / "outreach_workflow_agent.af",
        FIXTURES / "letta" / "composio_github_star_agent.af",
    ],
    "continue": [FIXTURES / "continue" / "sessions" / "7c1e2a4b-5d6f-4a8b-9c0d-1e2f3a4b5c6d.json"],
}


@pytest.mark.parametrize("format", sorted(_MUTATED_OR_CUT))
@SETTINGS
@given(data=st.data())
def test_a_fixture_mutated_or_cut_short_loads_or_raises_a_typed_error(
    tmp_path_factory: pytest.TempPathFactory, format: str, data: st.DataObject
) -> None:
    # A JSON value changed (loaded as its format), or the file cut short (loaded by detection).
    fixture = data.draw(st.sampled_from(_MUTATED_OR_CUT[format]))
    path = tmp_path_factory.mktemp(format) / fixture.name
    lines = fixture.suffix == ".jsonl"
    value = values(fixture) if lines else values(fixture)[0]
    mutated_or_cut(data, path, value, fixture.read_text(), format, lines=lines)


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


# --- what a fixture does not hold ---


def test_a_record_whose_blocks_are_all_dropped_is_skipped_not_unaccounted() -> None:
    # An AutoGen result message whose results name no call: every block left out, the message
    # skipped for it (Hypothesis found it unaccounted once): once, for what it held — not also
    # each result as a part left out.
    state = json.loads((FIXTURES / "autogen" / "coder_state.json").read_text())
    messages = state["llm_context"]["messages"]
    results = next(m for m in messages if m["type"] == "FunctionExecutionResultMessage")
    for result in results["content"]:
        result["call_id"] = ""
    census = load(state, format="autogen").census
    assert census is not None and census.adds_up, census and census.problems()
    assert census.skipped == {"tool result without a call id": 1}
    assert "tool result without a call id" not in census.left_out
    assert sum(census.read.values()) == len(messages)


def test_a_failed_replys_billed_step_is_counted_lost() -> None:
    # OpenCode does not send a failed reply again; a step of it that was billed is read, and
    # its usage lost — said, not dropped.
    export = json.loads((FIXTURES / "opencode" / "export.json").read_text())
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


@pytest.mark.parametrize(("format", "path"), _SHUFFLED, ids=lambda v: getattr(v, "name", v))
def test_a_foreign_line_midway_is_counted_and_the_lines_after_it_still_read(
    format: str, path: Path, tmp_path: Path
) -> None:
    # The shuffle above inserts foreign objects where Hypothesis draws; here, always midway.
    lines = path.read_text().splitlines()
    middle = len(lines) // 2
    foreign = tmp_path / path.name
    foreign.write_text("\n".join([*lines[:middle], '{"not": "a line of it"}', *lines[middle:]]))
    census = added_up(load(foreign, format=format))  # type: ignore[arg-type]
    assert sum(census.read.values()) == sum(1 for line in lines if line.strip()) + 1
    assert load(foreign, format=format).messages == load(path, format=format).messages  # type: ignore[arg-type]
