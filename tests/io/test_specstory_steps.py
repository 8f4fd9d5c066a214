"""The agent's steps in SpecStory's 2025 layouts (``ctxlab/io/formats/specstory/steps.py``): each
terminal command, file read, search, edit and fetched rule a tool call with the command or
summary SpecStory shows and the output it shows as the result — in the 2025-04 layout (steps
parted by ``---``: ``tests/fixtures/specstory/2025-04-30_17-43-task-007-progress.md``), in the
mid-2025 one (steps one after another: ``2025-07-17_14-02Z-movie-poster-matching.md``) and in
replies generated here after the 2025-04 layout; code fences closed as SpecStory writes them."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io._transcript import Transcript
from tests.hostile import assert_linear
from tests.io.shown import shown

FOLDER = Path(__file__).parents[1] / "fixtures" / "specstory"
TASK = FOLDER / "2025-04-30_17-43-task-007-progress.md"
INLINE = FOLDER / "2025-07-17_14-02Z-movie-poster-matching.md"
EDIT = {"summary": "(an edit: the diff shown is its result)"}


def calls(transcript: Transcript) -> list[tuple[str, dict[str, Any], str]]:
    """Each call's name and input, with its result's text."""
    results = {
        b.tool_use_id: b.text
        for m in transcript.messages
        if m.role == "user"
        for b in m.tool_results
    }
    return [
        (b.name, b.input, results[b.id])
        for m in transcript.messages
        if m.role == "assistant"
        for b in m.tool_uses
    ]


def test_each_step_of_a_2025_04_reply_is_a_call_with_its_result() -> None:
    transcript = load(TASK)
    found = calls(transcript)
    assert [(name, given) for name, given, _ in found] == [
        ("run_terminal_cmd", {"command": "minsky tasks get '#007' --json"}),
        (
            "Read file",
            {"summary": "Read file: /Users/dev/src/minsky/process/tasks/007-add-tasks-create.md"},
        ),
        ("Searched codebase", {"summary": 'Searched codebase "createTask" • **2** results'}),
        ("fetch_rules", {"summary": "### Rule: minsky-workflow"}),
        ("edit_file", EDIT),
        ("run_terminal_cmd", {"command": "bun test src/domain/tasks.test.ts"}),
        ("run_terminal_cmd", {"command": 'git commit -am "task#007: add tasks create"'}),
        ("Cancelled", {"summary": "Cancelled"}),
        ("run_terminal_cmd", {"command": "bun run lint"}),
    ]
    results = [result for _, _, result in found]
    assert results[0] == '{\n  "id": "#007",\n  "status": "IN-PROGRESS"\n}'
    assert results[2].startswith("| File | Lines |") and results[2].endswith("| L1-15 |")
    # The rule whole: its own fences and "---" inside it, up to the marks glued to its end.
    assert results[3].endswith("---\n\nNever read the task files directly.```")
    assert results[4].startswith("```diff\n  export function createTask") and results[4].endswith(
        '+ import { parseSpec } from "./spec";\n```'
    )  # two fences one after another: one edit's hunks
    # An output holding "---" and a header's words stays the output, not a turn.
    assert results[5].startswith("bun test v1.2.10") and results[5].endswith("1 pass\n 0 fail")
    assert "---\n_**User**_ is how the spec file starts" in results[5]
    assert results[6] == "(no output shown)"  # the user stopped it: the next turn is theirs
    assert results[8] == "$ eslint . --ext .ts"
    users = [m for m in transcript.messages if m.role == "user" and m.content[-1].type == "text"]
    assert [m.content[-1].text for m in users] == [  # type: ignore[union-attr]
        "let's continue with task #007",
        "wait, run the linter first",
    ]
    texts = [b[1] for role, b in shown(transcript) if role == "assistant" and b[0] == "text"]
    assert texts == [
        "I'll check the task's status first.",
        "The spec asks for a `create` command. Let me add it.",
        "The test passes. Let me commit.",
        # A command shown in the reply's own text (indented, no output after it) is its text.
        "The linter passes. Committing now:\n\n- To check it yourself:\n  ```bash\n"
        "  bun run lint\n  ```",
    ]
    assert transcript.census is not None and transcript.census.replies == 10


def test_the_steps_of_a_mid_2025_reply_stand_one_after_another() -> None:
    transcript = load(INLINE)
    assert calls(transcript) == [
        (
            "Read file",
            {"summary": "Read file: src/app/api/lookup/route.ts"},
            "Read file: src/app/api/lookup/route.ts",
        ),
        (
            "Read file",
            {"summary": "Read file: src/app/api/lookup/score.ts"},
            "Read file: src/app/api/lookup/score.ts",
        ),
        (
            "Searched web",
            {"summary": 'Searched web "TMDB search movie year parameter" • **2** results'},
            "| Title | URL |\n|-------|-----|\n| Search - Movies | "
            "https://developer.themoviedb.org/reference/search-movie |\n| Details | "
            "https://developer.themoviedb.org/reference/movie-details |",
        ),
        ("run_terminal_cmd", {"command": "date"}, "Thu Jul 17 10:12:22 EDT 2025"),
        (
            "edit_file",
            EDIT,
            "```diff\n- \n+ # Chat Summary: Movie Poster Matching\n+ \n"
            "+ - The search now passes the release year.\n```",
        ),
    ]
    replies = [m for m in transcript.messages if m.role == "assistant"]
    # A diff in the reply's prose (after its words, not after a step) is its text.
    assert (
        replies[3]
        .content[0]
        .text.startswith(  # type: ignore[union-attr]
            "The search ignores the year. The change I would make:\n```diff\n"
        )
    )
    assert replies[-1].content[0].text == "The summary is in `.docs/summary.md`."  # type: ignore[union-attr]
    assert transcript.meta["skipped"] == {"thought process": 1}


def test_a_fence_closes_on_a_line_of_its_own_marks_only() -> None:
    # CommonMark: a line of marks with words after them ("```text …") inside a fence is its
    # content, not its end. Read as an end, the fences after it went out of step and the
    # turns after them were swallowed as code.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chat.md"
        path.write_text(
            "<!-- Generated by SpecStory -->\n\n# T (2025-05-01 10:00:00)\n\n_**User**_\n\n"
            "show the notes\n\n---\n\n_**Assistant**_\n\n```bash\ncat notes.md\n```\n\n"
            "```\n```text opens a block, a line of marks alone ends it\n```\n\n---\n\n"
            "_**User**_\n\nthanks\n\n---\n\n_**Assistant**_\n\nok\n"
        )
        transcript = load(path)
    assert calls(transcript) == [
        (
            "run_terminal_cmd",
            {"command": "cat notes.md"},
            "```text opens a block, a line of marks alone ends it",
        )
    ]
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert texts == ["show the notes", "thanks", "ok"]


# --- replies written after the 2025-04 layout ---------------------------------------------------

_words = st.text(alphabet="abcdefgh xyz.,=()'", min_size=1, max_size=20).filter(
    lambda t: t.strip() == t and not t.startswith(("Read", "Searched", "Cancelled"))
)


@st.composite
def step(draw: st.DrawFn) -> tuple[str, tuple[str, dict[str, Any], str] | None]:
    """A step as SpecStory writes it, and the call it is (None: the reply's text)."""
    kind = draw(st.sampled_from(["terminal", "read", "search", "edit", "text"]))
    words = draw(st.lists(_words, min_size=1, max_size=3))
    if kind == "terminal":
        command, output = words[0], "\n".join(words[1:])
        written = f"```bash\n{command}\n```\n\n```\n{output}\n\n```"
        return written, ("run_terminal_cmd", {"command": command}, output or "(no output shown)")
    if kind == "read":
        line = f"Read file: src/{words[0].replace(' ', '_')}.py"
        return line, ("Read file", {"summary": line}, line)
    if kind == "search":
        summary = f'Searched codebase "{words[0]}" • **1** results'
        rows = "\n".join(f"| `{w}` | L1-9 |" for w in words)
        written = (
            f"<details>\n            <summary>{summary}</summary>\n        \n| File | Lines |\n"
            f"|------|-------|\n{rows}\n\n</details>"
        )
        return written, (
            "Searched codebase",
            {"summary": summary},
            f"| File | Lines |\n|------|-------|\n{rows}",
        )
    if kind == "edit":
        diff = "\n".join(f"+ {w}" for w in words)
        written = f"```diff\n{diff}\n```"
        return written, ("edit_file", EDIT, written)
    return "\n\n".join(words), None


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(step(), min_size=1, max_size=8))
def test_a_2025_04_reply_of_n_steps_loads_as_its_calls_in_order(
    steps: list[tuple[str, tuple[str, dict[str, Any], str] | None]],
) -> None:
    body = "\n\n---\n\n".join(written for written, _ in steps)
    text = (
        "<!-- Generated by SpecStory -->\n\n# Steps (2025-04-30 17:43:12)\n\n"
        f"_**User**_\n\ngo\n\n---\n\n_**Assistant**_\n\n{body}\n\n---\n\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "2025-04-30_17-43-steps.md"
        path.write_text(text)
        transcript = load(path)
    expected = [call for _, call in steps if call is not None]
    assert calls(transcript) == expected
    # Each call ends its request: as many replies as calls, and one more after text alone.
    replies = sum(m.role == "assistant" for m in transcript.messages)
    assert replies == len(expected) + (steps[-1][1] is None)
    census = transcript.census
    assert census is not None and census.adds_up and census.tool_calls == len(expected)


def test_a_2025_tool_use_of_a_command_gives_its_command_and_output() -> None:
    # "Tool use: **run_terminal_cmd**" then the command's fence and its output's: the call's
    # input is the command, its result the output (not the tool's line and both fences).
    transcript = load(FOLDER / "2025-10-01_23-30Z-cursor-avatars.md")
    assert calls(transcript)[2] == (
        "run_terminal_cmd",
        {"command": 'cd /home/dev/wall && grep -n "avatar-img" script.js'},
        '145: <img class="avatar-img">',
    )


def test_rules_details_and_commands_never_closed_are_read_in_linear_time(tmp_path: Path) -> None:
    # Each search for an end (a rule's glued marks, a fence's closing line, "</details>")
    # starts where the last one stopped, or once for all when it found none.
    pieces = [
        "### Rule: r\n\n**d**\n\n```markdown\nx```\ny\n",
        "<details>\n<summary>Searched codebase</summary>\n",
        "```bash\nls\n```\n\n```\nout\n",
        "```diff\n+ a\n```\n",
        "Read file: a.py\n",
        "words ```\n",
    ]

    def make(n: int) -> Callable[[], object]:
        body = "".join(pieces[i % len(pieces)] for i in range(n // 20))
        path = tmp_path / f"{n}.md"
        path.write_text(
            f"<!-- Generated by SpecStory -->\n\n_**User**_\n\ngo\n\n---\n\n"
            f"_**Assistant**_\n\n{body}"
        )
        return lambda: load(path)

    assert_linear(make, 60_000, bound=10.0)


def _reply(tmp_path: Path, body: str) -> Transcript:
    path = tmp_path / "chat.md"
    path.write_text(
        "<!-- Generated by SpecStory -->\n\n# T (2025-07-01 10:00:00Z)\n\n_**User**_\n\ngo\n\n---"
        f"\n\n_**Assistant**_\n\n{body}\n"
    )
    return load(path)


def test_which_fences_of_a_reply_are_steps_and_which_its_text(tmp_path: Path) -> None:
    # A diff after a step (blank lines between) is an edit, and ends before a fence of another
    # kind; a diff after a fence of the reply's own text is text; a command with no output is
    # a step only when it is the whole part.
    found = _reply(
        tmp_path,
        "Read file: a.py\n\n```diff\n+ x\n```\n```python\nprint(1)\n```\n"
        "Run:\n```bash\nls\n```\n```diff\n+ y\n```\nThen:\n```bash\nmake\n```",
    )
    assert calls(found) == [
        ("Read file", {"summary": "Read file: a.py"}, "Read file: a.py"),
        ("edit_file", EDIT, "```diff\n+ x\n```"),
    ]
    texts = [b[1] for role, b in shown(found) if role == "assistant" and b[0] == "text"]
    assert texts == [
        "```python\nprint(1)\n```\nRun:\n```bash\nls\n```\n```diff\n+ y\n```\nThen:\n"
        "```bash\nmake\n```"
    ]
    after_step = _reply(tmp_path, "Read file: a.py\n```bash\nmake\n```")
    assert [name for name, _, _ in calls(after_step)] == ["Read file"]  # the command: text
    alone = _reply(tmp_path, "```bash\nmake\n```")
    assert calls(alone) == [("run_terminal_cmd", {"command": "make"}, "(no output shown)")]
