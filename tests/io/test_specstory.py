"""SpecStory Markdown (``tests/fixtures/specstory``: two real exports of specstoryai/getspecstory
— a Cursor IDE chat and a Codex CLI session in Markdown v2.1.0 — and hand-made files of the 2025
layouts): user turns, replies and tool uses rebuilt from the Markdown — checked against the
test's own count of the file's headers and tool markers —, headers inside code blocks kept as
text, detection from the first bytes, ``sessions`` listing SpecStory files and no other Markdown,
and any cut or spliced text loading or raising a typed error."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxlab
from ctxlab import load
from ctxlab.io.formats.specstory import parse as _specstory
from tests.hostile import assert_linear
from tests.io.mutate import loads_or_refuses
from tests.strategies import SETTINGS, any_text

FOLDER = Path(__file__).parents[1] / "fixtures" / "specstory"
CURSOR_V2 = FOLDER / "2025-06-30_12-46-48Z-fix-unknown-field-error-in-api-request.md"
CODEX_V2 = FOLDER / "2026-08-03_21-15-01Z-use-claude-commands-code.md"
CURSOR_2025 = FOLDER / "2025-10-01_23-30Z-cursor-avatars.md"
CURSOR_AGENT = FOLDER / "2025-12-02_12-49Z-cursor-agent-mode.md"
FIRST = FOLDER / "2025-03-11_20-11-parking-page.md"
FILES = [CURSOR_V2, CODEX_V2, CURSOR_2025, CURSOR_AGENT, FIRST]
# The 2025 layouts of steps (their calls listed one by one in tests/io/test_specstory_steps.py).
STEPS = [
    FOLDER / "2025-04-30_17-43-task-007-progress.md",
    FOLDER / "2025-07-17_14-02Z-movie-poster-matching.md",
]


def _count(text: str) -> tuple[int, int]:
    """The test's own reading: (user turns with words, tool uses) outside code blocks."""
    users, tools, fence, in_tool = 0, 0, False, False
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if "<tool-use" in line:
            tools += 1
            in_tool = "</tool-use>" not in line
            continue
        if in_tool:
            in_tool = "</tool-use>" not in line
            continue
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        if line.startswith("Tool use: **"):
            tools += 1
        if line.startswith("_****_") and re.match(r"(Read file:|<details>)", lines[index + 2]):
            tools += 1
        if line.startswith("_**User"):
            following = "\n".join(lines[index + 1 : index + 4]).replace("---", "").strip()
            users += bool(following) and not following.startswith("_**")
    return users, tools


@pytest.mark.parametrize("path", FILES, ids=[p.stem[:20] for p in FILES])
def test_an_export_loads_its_turns_and_tool_uses(path: Path) -> None:
    users, tools = _count(path.read_text())
    transcript = load(path)
    assert transcript.meta["source"] == "specstory"
    uses = [b for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert len(uses) == tools
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]  # each shown output its result
    spoken = [m for m in transcript.messages if m.role == "user" and m.content[0].type == "text"]
    assert len(spoken) == users
    assert transcript.usage == {} and "inferred" in transcript.meta
    # No turn header leaks into a reply's text (a tool use's body may open code blocks mid-line).
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    leaked = [t for t in texts if re.search(r"^_\*\*(?:Agent|Assistant)", t, re.MULTILINE)]
    assert leaked == []


def test_the_header_says_who_and_which_model() -> None:
    transcript = load(CURSOR_V2)
    assert transcript.meta["provider"] == "Cursor IDE"
    assert transcript.meta["session_id"] == "7648a3a8-cec0-45cc-a87c-6ad5a39677a2"
    assert transcript.meta["models"] == ["claude-4-sonnet"]
    old = load(CURSOR_2025)
    assert old.meta["models"] == ["claude-4.5-sonnet-thinking"]
    assert load(CURSOR_AGENT).meta["models"] == ["claude-4.5-opus-high-thinking"]
    assert old.meta["skipped"] == {"thought process": 1, "empty user turn": 1}


def test_a_header_inside_a_code_block_is_text() -> None:
    transcript = load(CURSOR_2025)
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert any("_**User**_\nif (avatarNode)" in t for t in texts)


def test_a_tool_use_says_what_it_did_and_shows_its_output() -> None:
    transcript = load(CURSOR_V2)
    edit = next(
        b
        for m in transcript.messages
        if m.role == "assistant"
        for b in m.tool_uses
        if b.name == "search_replace"
    )
    assert edit.input == {"summary": "Tool use: **search_replace** • Edit file: pkg/cloud/sync.go"}
    result = next(
        b
        for m in transcript.messages
        if m.role == "user"
        for b in m.tool_results
        if b.tool_use_id == edit.id
    )
    assert result.text.startswith("**Chunk 1**") and "AgentName" in result.text
    agent_mode = load(CURSOR_AGENT).messages
    command = next(
        b
        for m in agent_mode
        if m.role == "assistant"
        for b in m.tool_uses
        if b.name == "run_terminal_cmd"
    )
    assert command.input["summary"].endswith("cd /home/dev/app && npm test")  # unescaped


def test_sessions_lists_specstory_files_and_no_other_markdown(tmp_path: Path) -> None:
    history = tmp_path / ".specstory" / "history"
    shutil.copytree(FOLDER, tmp_path / "exports", ignore=shutil.ignore_patterns("LICENSE"))
    (tmp_path / "NOTES.md").write_text("# Notes\n\n_**User**_ is how SpecStory writes a turn.\n")
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert sorted(Path(p).name for p in frame["path"]) == sorted(p.name for p in FILES + STEPS)
    assert set(frame["format"]) == {"specstory"} and frame["problem"].isna().all()
    assert not history.exists()


@SETTINGS
@given(st.sampled_from(FILES + STEPS), st.data())
def test_cut_or_spliced_markdown_loads_or_raises_a_typed_error(
    tmp_path_factory: pytest.TempPathFactory, path: Path, data: st.DataObject
) -> None:
    text = path.read_text()
    at = data.draw(st.integers(0, len(text)))
    insert = data.draw(
        st.sampled_from(
            ["", "```", "_**User**_", "_****_", '<tool-use data-tool-name="x">', "---", "<think>"]
        )
        | any_text
    )
    spliced = text[:at] + "\n" + insert + "\n" + text[at + data.draw(st.integers(0, 200)) :]
    target = tmp_path_factory.mktemp("specstory") / "chat.md"
    target.write_text(
        spliced if spliced.startswith("<!--") else text[:40] + spliced, errors="surrogatepass"
    )
    loads_or_refuses(lambda: load(target, format="specstory"))


def _tool_output(output: str) -> str:
    return (
        "<!-- Generated by SpecStory -->\n\n# A title\n\n_**User**_\n\nLook.\n\n---\n\n"
        "_**Assistant (model x)**_\n\nLooking.\n\n---\n\n"
        f"Tool use: **grep**\n\n{output}\n\n---\n"
    )


def test_a_tool_output_of_unclosed_wrapper_tags_is_kept_and_read_in_linear_time(
    tmp_path: Path,
) -> None:
    # Every <details / </tool-use opening below is never closed (no ">" follows): the output
    # keeps them as text. Reading them must not search to the file's end from each of them.
    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"{n}.md"
        path.write_text(_tool_output("| a | b |\n" + "<details x " * (n // 11) + "end"))
        return lambda: load(path)

    assert_linear(make, 300_000, bound=5.0)
    result = load(tmp_path / "300000.md").messages[-1].content[0]
    assert result.content == "| a | b |\n" + "<details x " * 27_272 + "end"  # type: ignore[union-attr]


def test_the_wrapper_tags_are_searched_once_each_and_once_past_an_unclosed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted rather than timed: a tag never closed ends the search (no later tag can close),
    # so 10,000 of them cost one search, not 10,000 searches each to the text's end.
    searched: list[int] = []
    pattern = _specstory._WRAPPER

    class Counting:
        def search(self, text: str, at: int) -> re.Match[str] | None:
            searched.append(at)
            return pattern.search(text, at)

    monkeypatch.setattr(_specstory, "_WRAPPER", Counting())
    text = "<details>a</details>" * 3 + "b" + "</tool-use x" * 10_000 + "c"
    assert _specstory._without_wrappers(text) == "aaab" + "</tool-use x" * 10_000 + "c"
    assert len(searched) == 7  # six closed tags, then the first unclosed one
