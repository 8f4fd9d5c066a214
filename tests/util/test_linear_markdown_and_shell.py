"""The patterns of SpecStory's Markdown and of shell edits (``sed`` substitutions), rewritten
to run in time linear in their text, find exactly what the patterns they replace found: each
old pattern is kept here as the definition and compared with its replacement on texts made of
the pieces that matter to it (hypothesis), where the old ones are fast, and on every SpecStory
fixture. Then each is timed at ``n`` and ``4n`` on the text that made the old pattern take the
square of its length (or more). A heredoc's end, once a pattern too, is now read as the shell
reads it, and compared with bash itself (tests/util/test_shell.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io.formats.specstory import parse as _specstory
from ctxlab.pipeline import _changes
from ctxlab.util import _shell
from tests.hostile import assert_linear

SETTINGS = settings(max_examples=int(os.environ.get("CTXLAB_EXAMPLES", 300)), deadline=None)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specstory"

OLD_TOOL_TAG = re.compile(r'<tool-use[^>]*data-tool-name="(?P<name>[^"]*)"[^>]*>', re.IGNORECASE)
OLD_SUMMARY = re.compile(r"<summary>(?P<text>.*?)</summary>", re.DOTALL)
OLD_SESSION = re.compile(r"<!--\s*(?P<provider>.+?) Session (?P<id>[\w-]+)")
OLD_TOOL_BLOCK = re.compile(r"<tool-use\b.*?</tool-use>", re.DOTALL | re.IGNORECASE)
OLD_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
OLD_WRAPPER = re.compile(r"</?(?:tool-use|details)[^>]*>")
OLD_TITLE = re.compile(r"^#{1,2} (?P<title>.+?)(?: \((?P<date>[^)]*)\))?\s*$")
OLD_SUBSTITUTE = re.compile(
    r"^(\d+(?:,\d+)?|/[^/]*/)?s(.)(.*?)(?<!\\)\2(.*?)(?<!\\)\2([gIp0-9]*)$", re.S
)


def pieces(*parts: str, size: int = 14) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=size).map("".join)


def fixture_texts() -> list[str]:
    """Each SpecStory fixture whole, and each of its assistant turns' parts."""
    texts = []
    for path in sorted(FIXTURES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        texts.append(text)
        for _, role, _, body in _specstory._sections(text):
            if role == "assistant":
                texts += _specstory._segments(body)
    assert len(texts) > 20
    return texts


# Random pieces, and opening tags shaped like SpecStory's with pieces among their attributes
# (most random texts hold no tag the old pattern matches).
TOOL_TAG_TEXT = st.one_of(
    pieces(
        "<tool-use",
        "<TOOL-USE",
        "<tool-used",
        ' data-tool-name="',
        'DATA-TOOL-NAME="',
        'data-tool-type="read" ',
        '"',
        ">",
        "Bash",
        " ",
        "\n",
        "<",
        "</tool-use>",
    ),
    st.builds(
        lambda before, inside, after: before + "<tool-use" + inside + after,
        pieces("x", "<tool-use", ">", '"', size=3),
        pieces(
            ' data-tool-name="', '"', "Bash", ">", " ", 'data-tool-type="x"', "<tool-use", size=8
        ),
        pieces('"', ">", "</tool-use>", "x", size=3),
    ),
)


@SETTINGS
@given(TOOL_TAG_TEXT)
@example('<tool-use data-tool-name="a" data-tool-name="b">')  # the last attribute
@example('<tool-use data-tool-name="a>b">')  # a name may hold a ">"
@example('<tool-use data-tool-name="a" data-tool-name="b')  # b is never closed
@example('<tool-use data-tool-name="a"<tool-use data-tool-name="b">')
@example('<tool-use>data-tool-name="a">')  # outside the tag
def test_a_tool_uses_name_as_the_old_pattern(text: str) -> None:
    old = OLD_TOOL_TAG.search(text)
    assert _specstory._tool_name(text) == (old.group("name") if old else None)


@SETTINGS
@given(
    pieces("<summary>", "</summary>", "<SUMMARY>", "<summary", "summary>", "x", "\n", "<", "/", ">")
)
@example("</summary><summary>a</summary>b</summary>")
def test_the_summary_as_the_old_pattern(text: str) -> None:
    old = OLD_SUMMARY.search(text)
    expected = (old.start(), old.end(), old.group("text")) if old else None
    assert _specstory._summary(text) == expected


@SETTINGS
@given(
    pieces(
        "<tool-use",
        "<Tool-Use",
        "<tool-used",
        "<tool-use>",
        "</tool-use>",
        "</TOOL-USE>",
        "</tool-use",
        "<think>",
        "</think>",
        "<details>",
        "</details>",
        "<details",
        ">",
        " ",
        "x",
        "\n",
    )
)
@example("<tool-use a><tool-use b></tool-use>x</Tool-Use>")
@example("<think>a<think>b</think>c</think>")
def test_tool_blocks_thoughts_and_wrappers_as_the_old_patterns(text: str) -> None:
    assert _specstory._TOOL_BLOCK.spans(text) == [m.span() for m in OLD_TOOL_BLOCK.finditer(text)]
    assert _specstory._THINK.sub("", text) == OLD_THINK.sub("", text)
    assert _specstory._without_wrappers(text) == OLD_WRAPPER.sub("", text)


SESSION_TEXT = st.one_of(
    pieces(
        "<!--",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "Session",
        " Session ",
        "cursor",
        "abc-1",
        "-",
        "x",
        "<!-",
        "é",
        "\u2028",
    ),
    # A comment's white space, provider and id, with pieces that make the pattern
    # backtrack: line breaks, comments and " Session " again.
    st.builds(
        lambda *parts: "<!--".join(parts[:2]) + " Session ".join(parts[2:]),
        pieces("x", "<!--", "\n", size=2),
        pieces(" ", "\t", "\n", "\r", "\u2028", " Session ", size=3),
        pieces("cursor", " ", "x", "\n", "<!--", " Session ", "-", size=4),
        pieces("abc", "-", "1", " ", "é", "\n", "Session ", size=3),
    ),
)


@SETTINGS
@given(SESSION_TEXT)
@example("<!-- cursor Session 3f2a-1 -->")
@example("<!--  Session x")  # the pattern gives one space back: the provider is " "
@example("<!--\n Session x")  # ... but never a line break
@example("<!-- Session abc Session def")
@example("<!-- a\nb Session x <!-- c Session y")
def test_the_session_comment_as_the_old_pattern(text: str) -> None:
    old = OLD_SESSION.search(text)
    assert _specstory._session(text) == (old.group("provider", "id") if old else None)


@SETTINGS
@given(
    pieces(
        "#", "# ", "## ", " ", "  ", "\t", "(", ")", " (", ") ", "x", "2025-01-02", "\u2028", "é"
    )
)
@example("# Fix the bug (2025-01-02 10:00Z)")
@example("## A (b) (c)  ")  # the last parenthesis closed at the end
@example("# A (b (c) d)")  # the date holds no ")"
@example("#  ")  # a title of one space
@example("### x")
@example("# (x)")  # the title needs a character before " ("
def test_a_headings_title_as_the_old_pattern(line: str) -> None:
    old = OLD_TITLE.match(line)
    assert _specstory._title(line) == (old.group("title") if old else None)


def test_the_specstory_fixtures_as_the_old_patterns() -> None:
    names = sessions = titles = 0
    for text in fixture_texts():
        old = OLD_TOOL_TAG.search(text)
        assert _specstory._tool_name(text) == (old.group("name") if old else None)
        names += old is not None
        summary = OLD_SUMMARY.search(text)
        expected = (summary.start(), summary.end(), summary.group("text")) if summary else None
        assert _specstory._summary(text) == expected
        for line in text.splitlines()[:12]:
            title = OLD_TITLE.match(line)
            assert _specstory._title(line) == (title.group("title") if title else None)
            titles += title is not None
        session = OLD_SESSION.search(text[:4096])
        assert _specstory._session(text[:4096]) == (session.groups() if session else None)
        sessions += session is not None
        blocks = [m.span() for m in OLD_TOOL_BLOCK.finditer(text)]
        assert _specstory._TOOL_BLOCK.spans(text) == blocks
        assert _specstory._THINK.sub("", text) == OLD_THINK.sub("", text)
        assert _specstory._without_wrappers(text) == OLD_WRAPPER.sub("", text)
    # The fixtures hold what the patterns read (the comparisons above are not all of None).
    assert names >= 3 and sessions >= 2 and titles >= 2


SED_PART = pieces("a", "b", "D", "\\", "\\D", "g", "1", "p", "\n", " ", size=5)
# Random pieces, and substitutions whose delimiter ("D" in the parts) stands in its places and
# elsewhere: in the old and new text, escaped or not, among the flags (and after them).
SED_TEXT = st.one_of(
    pieces(
        "s", "/", "|", "#", "\\", "1", "12", ",", "g", "p", "I", "a", "b", "\n", " ", "x", size=16
    ),
    st.builds(
        lambda address, delimiter, parts, flags: (
            address
            + "s"
            + delimiter
            + delimiter.join(p.replace("D", delimiter) for p in [*parts, flags])
        ),
        st.sampled_from(["", "3", "1,12", "/x/", "1,", "/", "12a"]),
        st.sampled_from(["/", "|", "#", "\\", "g", "1", "\n", "s", ",", " "]),
        st.lists(SED_PART, min_size=2, max_size=3),
        pieces("g", "2", "p", "I", "D", "\n", "x", size=3),
    ),
)


@SETTINGS
@given(SED_TEXT)
@example("s/a/b/g")
@example("3,7s|x\\|y|z|2g")
@example("/foo/s/a/b/")
@example("s/a\\/b/c/")
@example("sgagbgg")  # the delimiter a flag
@example("s\\a\\\\b\\")  # the delimiter a backslash
@example("s\na\nb\n")  # the delimiter a line break, one at the end
@example("s/a/b/c/")  # the new text holds a delimiter: ends at the last one
@example("1,s/a/b/")
def test_a_sed_substitution_as_the_old_pattern(expression: str) -> None:
    old = OLD_SUBSTITUTE.match(expression)
    assert _changes._substitution(expression) == (old.group(1, 3, 4) if old else None)


def test_sed_and_heredoc_changes_read_as_before() -> None:
    assert _changes.shell_changes("sed -i 's/old_name/new_name/g' src/app.py") == [
        ("src/app.py", "`old_name` → `new_name` (sed)")
    ]
    assert _changes.shell_changes("sed -i '3,4s#a\\#b#c#' f.py") == [
        ("f.py", "`a\\#b` → `c` (sed, line 3,4)")
    ]
    # The blank lines before the closing word are the body's, as the shell writes them (the
    # pattern this replaced left them out); a heredoc's body is compared with bash's in
    # tests/util/test_shell.py.
    assert _changes.shell_changes("cat <<EOF > f.py\na\nb\n\n \nEOF\n") == [
        ("f.py", "written (4 lines)")
    ]


# Timed: each reproduction at n and 4n (`assert_linear`).

HOSTILE: dict[str, Callable[[int], Callable[[], object]]] = {
    "a tool use's name, opening tags never closed": lambda n: (
        lambda: _specstory._tool_name("<tool-use" * (n // 9))
    ),
    "a tool use's name, opening tags without one": lambda n: (
        lambda: _specstory._tool_name("<tool-use " * (n // 10) + '>data-tool-name="x">')
    ),
    "a tool use's name, an attribute before opening tags never closed": lambda n: (
        lambda: _specstory._tool_name('data-tool-name="x">' + "<tool-use" * (n // 9))
    ),
    "a summary never closed": lambda n: lambda: _specstory._summary("<summary>" * (n // 9)),
    "session comments never said": lambda n: lambda: _specstory._session("<!--" * (n // 4)),
    "session comments of white space": lambda n: (
        lambda: _specstory._session("<!--" + " \n" * (n // 2))
    ),
    "tool blocks never closed": lambda n: (
        lambda: _specstory._TOOL_BLOCK.spans("<tool-use" * (n // 9))
    ),
    "thoughts never closed": lambda n: lambda: _specstory._THINK.sub("", "<think>" * (n // 7)),
    "wrapper tags never closed": lambda n: (
        lambda: _specstory._without_wrappers("</tool-use" * (n // 10))
    ),
    "a sed address repeated": lambda n: lambda: _changes._substitution("7,7s" * (n // 4)),
    "a sed substitution of delimiters": lambda n: (
        lambda: _changes._substitution("s" + "/" * n + "x")
    ),
    "a heredoc of blank lines": lambda n: lambda: _shell.heredoc_body("\n" * n + "x", 0, "EOF"),
    # Issue 51 (the regex audit's pumps ended by a failing character): 64,000 characters took
    # 17 s.
    "a title of parentheses never closed": lambda n: (
        lambda: _specstory._title("# " + "a (" * (n // 3))
    ),
    "a title of parentheses closed too early": lambda n: (
        lambda: _specstory._title("# " + "a (" * (n // 3) + ") x")
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_reading_is_linear(case: str) -> None:
    # Long texts: a reading that searches to the end from each tag (str.find, fast) shows its
    # square only past a few hundred thousand characters. Linear, each takes under 0.1 s.
    assert_linear(HOSTILE[case], 200_000, bound=5.0)


def test_a_specstory_file_of_unclosed_tags_loads_in_linear_time(tmp_path: Path) -> None:
    def make(n: int) -> Callable[[], object]:
        reply = "<think>x " * (n // 36) + "<summary>x " * (n // 44) + "<tool-use x " * (n // 48)
        path = tmp_path / f"{n}.md"
        path.write_text(
            "<!-- Generated by SpecStory -->\n" + "<!--" * (n // 16) + "\n\n# A title\n\n"
            "_**User**_\n\nFix it.\n\n---\n\n_**Agent (model x)**_\n\n" + reply + "\n"
        )
        return lambda: load(path)

    assert_linear(make, 40_000, bound=5.0)
    transcript = load(tmp_path / "160000.md")
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    # Tags never closed are text: none is a thought taken out or a tool use.
    assert transcript.messages[1].content[0].text.count("<think>") == 160_000 // 36  # type: ignore[union-attr]


def test_a_sed_command_and_a_heredoc_are_read_in_linear_time() -> None:
    def make(n: int) -> Callable[[], object]:
        sed = "sed -i 's" + "/" * min(n, 3_900) + "x' f.py"  # (the first 4,000 are read)
        heredoc = "cat <<EOF > f.py\n" + "\n" * n + "x"
        return lambda: (_changes.shell_changes(sed), _changes.shell_changes(heredoc))

    assert_linear(make, 40_000, bound=5.0)
    assert _changes.shell_changes("cat <<EOF > f.py\n" + "\n" * 10 + "x") == [
        ("f.py", "written (11 lines)")
    ]


def test_a_heredoc_teed_to_many_files_is_counted_once() -> None:
    # A tee to n/20 files of an n-line heredoc: counting the input's lines for each file is
    # quadratic (issue 51's handover: one command may write thousands of files).
    def make(n: int) -> Callable[[], object]:
        files = " ".join(f"f{i}.py" for i in range(n // 20))
        command = f"tee {files} <<EOF\n" + "a\n" * n + "EOF\n"
        return lambda: _changes.shell_changes(command)

    assert_linear(make, 20_000, bound=5.0)
    found = _changes.shell_changes("tee -a a.py b.py <<EOF\nx\ny\nz\nEOF\n")
    assert found == [("a.py", "appended (3 lines)"), ("b.py", "appended (3 lines)")]
