"""The files a shell command changed, as the handover lists them (`_changes.shell_changes`):
read as the shell reads the command — what a quoted argument, a comment or a heredoc's body
holds is not a redirection — on the commands issue 51 found misread, and on commands built
from known pieces, each word quoted at random, where the construction knows the files it
wrote (hypothesis)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.pipeline._changes import shell_changes
from tests.hostile import assert_linear
from tests.strategies import SETTINGS
from tests.util.test_shell import LONG


def test_the_commands_issue_51_found_misread() -> None:
    # A redirection inside a quoted argument is text.
    assert shell_changes('git commit -m "cat > notes.py <<EOF"') == []
    assert shell_changes('echo "usage: prog > out.py"') == []
    # A comment is not a command.
    assert shell_changes("# sed -i 's/a/b/' f.py\nls") == []
    assert shell_changes("ls  # then: sed -i 's/a/b/' f.py > g.py") == []
    # >> appends, a heredoc's lines counted.
    assert shell_changes("cat >> f.py <<EOF\nx = 1\ny = 2\nEOF") == [("f.py", "appended (2 lines)")]
    # tee writes its file arguments (-a: appends them).
    assert shell_changes("tee f.py <<EOF\nx = 1\nEOF") == [("f.py", "written (1 lines)")]
    assert shell_changes("tee -a f.py g.txt <<'EOF' >/dev/null\nx\nEOF") == [
        ("f.py", "appended (1 lines)"),
        ("g.txt", "appended (1 lines)"),
    ]


def test_the_commands_that_were_read_right_still_are() -> None:
    assert shell_changes("cat <<'EOF' > reproduce.py\nimport x\nprint(1)\nEOF") == [
        ("reproduce.py", "written (2 lines)")
    ]
    assert shell_changes("echo hi >> notes.txt; grep foo a.py > /dev/null 2>&1") == [
        ("notes.txt", "appended")
    ]
    assert shell_changes("sed -i 's/old_name/new_name/g' src/app.py") == [
        ("src/app.py", "`old_name` → `new_name` (sed)")
    ]


def test_what_a_heredoc_holds_is_not_a_command() -> None:
    command = "cat <<'EOF' > run.sh\necho hi > inner.py\nsed -i 's/a/b/' inner.py\nEOF\n"
    assert shell_changes(command) == [("run.sh", "written (2 lines)")]
    # The heredoc through a pipe: tee writes what cat passes on.
    assert shell_changes("cat <<EOF | tee -a log.md\na\nb\nEOF") == [
        ("log.md", "appended (2 lines)")
    ]
    assert shell_changes("cat - <<EOF >a.py; cat b.py - <<EOF >c.py\nx\nEOF\ny\nEOF") == [
        ("a.py", "written (1 lines)"),
        ("c.py", "written"),  # b.py's lines too: not known
    ]
    # Written by a redirection of another descriptor: not the heredoc's lines.
    assert shell_changes("python - <<EOF 2> err.txt\nprint(1)\nEOF") == [("err.txt", "written")]


def test_sed_options_as_gnu_sed_reads_them() -> None:
    expected = [("a.py", "`x` → `y` (sed)")]
    assert shell_changes("sed -E -i.bak 's/x/y/' a.py") == expected
    assert shell_changes("sed --in-place --expression='s/x/y/' a.py") == expected
    assert shell_changes("sed 's/x/y/' -i a.py") == expected  # options after operands
    assert shell_changes("sed -i '' 's/x/y/' a.py") == expected  # BSD's empty suffix
    assert shell_changes("sed -ni -e 's/x/y/' a.py") == expected
    assert shell_changes("sudo sed -i -- 's/x/y/' a.py") == expected
    # -ie: GNU reads the e as -i's suffix, so the script is the first operand.
    assert shell_changes("sed -ie 's/x/y/' a.py") == expected
    # Not in place, or sed only named in an argument: nothing changed.
    assert shell_changes("sed -n 's/x/y/p' a.py") == []
    assert shell_changes("echo sed -i 's/x/y/' a.py") == []


def test_a_sed_of_many_expressions_is_one_short_line_in_linear_time() -> None:
    five = "sed -i " + " ".join(f"-e 's/a{n}/b{n}/'" for n in range(5)) + " x.py"
    assert shell_changes(five) == [
        ("x.py", "; ".join(f"`a{n}` → `b{n}` (sed)" for n in range(4)) + " (+1 more in this sed)")
    ]

    def make(n: int) -> Callable[[], object]:
        sed = "sed -i " + "-e s/a/b/ " * (n // 10) + "f.py"
        tee = "tee -a" + " f.py" * (n // 5) + " <<EOF\n" + "x\n" * (n // 2)
        return lambda: (shell_changes(sed), shell_changes(tee))

    assert_linear(make, LONG, bound=5.0)


# Commands built from known pieces: each knows the files it writes.

FILES = st.sampled_from(["notes.py", "src/app.py", "out.txt", "a-b.md", "./x.json", "dir/f.sh"])
DECOYS = st.sampled_from(
    [
        "usage: prog > out.py",
        "cat > notes.py <<EOF",
        "a; sed -i s/x/y/ q.py",
        "# c.py",
        "x | tee t.py",
        "2>&1 > e.py",
        "it's",
        'say "hi"',
        "back\\slash",
        "$HOME > h.py",
        "plain",
        "a && b >> z.py",
    ]
)
BODY_LINES = st.lists(
    st.sampled_from(
        ["x = 1", "echo hi > no.py", "sed -i 's/a/b/' no.py", "EOFX", "  EOF", "", "# >", "'", '"']
    ),
    max_size=5,
)
DELIMITERS = st.sampled_from(["EOF", "END", "PY"])
WRITES = st.sampled_from(
    [
        (">", "written"),
        (">>", "appended"),
        (">|", "written"),
        ("&>", "written"),
        ("1>>", "appended"),
    ]
)
SAFE = re.compile(r"[\w./:=+,@%-]+")


@st.composite
def quoted(draw: st.DrawFn, word: str) -> str:
    """``word`` as the shell reads it back: bare, in '…', in "…", escaped, or in two pieces
    quoted each its own way."""
    styles = ["single", "double", "escaped", "halves"]
    if SAFE.fullmatch(word) and not word.startswith("#"):
        styles.append("bare")
    style = draw(st.sampled_from(styles))
    if style == "halves" and len(word) > 1:
        cut = draw(st.integers(1, len(word) - 1))
        return draw(quoted(word[:cut])) + draw(quoted(word[cut:]))
    if style == "single" and "'" not in word:
        return f"'{word}'"
    if style == "double" or style == "single":
        return '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
    if style == "bare":
        return word
    return re.sub(r"(\W)", r"\\\1", word)


@dataclass
class Built:
    text: str
    heredocs: list[tuple[str, list[str]]] = field(default_factory=list)  # delimiter, lines
    writes: list[tuple[str, str]] = field(default_factory=list)


def _heredoc(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """A heredoc's opening (its delimiter quoted at random), delimiter and body lines."""
    delimiter = draw(DELIMITERS)
    return "<<" + draw(quoted(delimiter)), delimiter, draw(BODY_LINES)


@st.composite
def echo(draw: st.DrawFn) -> Built:
    words = ["echo", *[draw(quoted(w)) for w in draw(st.lists(DECOYS, max_size=3))]]
    if not draw(st.booleans()):
        return Built(" ".join(words))
    (operator, how), path = draw(WRITES), draw(FILES)
    # A redirection may stand anywhere among the words (even before the name).
    words.insert(draw(st.integers(0, len(words))), f"{operator} {draw(quoted(path))}")
    return Built(" ".join(words), writes=[(path, how)])


@st.composite
def commit(draw: st.DrawFn) -> Built:
    return Built(f"git commit -m {draw(quoted(draw(DECOYS)))}")


@st.composite
def cat_heredoc(draw: st.DrawFn) -> Built:
    opening, delimiter, lines = _heredoc(draw)
    (operator, how), path = draw(WRITES), draw(FILES)
    redirect = f"{operator}{draw(st.sampled_from(['', ' ']))}{draw(quoted(path))}"
    parts = draw(st.permutations([opening, redirect]))
    return Built(
        "cat " + " ".join(parts),
        [(delimiter, lines)],
        [(path, f"{how} ({len(lines)} lines)")],
    )


@st.composite
def tee_heredoc(draw: st.DrawFn) -> Built:
    opening, delimiter, lines = _heredoc(draw)
    paths = draw(st.lists(FILES, min_size=1, max_size=2))
    append = draw(st.sampled_from(["", "-a ", "--append "]))
    how = "appended" if append else "written"
    piped = draw(st.booleans())  # cat <<EOF | tee …, or tee … <<EOF
    quiet = draw(st.sampled_from(["", " > /dev/null"]))
    names = " ".join(draw(quoted(p)) for p in paths)
    text = (
        f"cat {opening} | tee {append}{names}{quiet}"
        if piped
        else f"tee {append}{names} {opening}{quiet}"
    )
    return Built(text, [(delimiter, lines)], [(p, f"{how} ({len(lines)} lines)") for p in paths])


@st.composite
def sed(draw: st.DrawFn) -> Built:
    old, new = draw(st.sampled_from([("foo", "bar"), ("a > b", "c"), ("x;y", "z # w")]))
    path = draw(FILES)
    option = draw(st.sampled_from(["-i", "-i.bak", "--in-place", "-E -i"]))
    expression = draw(quoted(f"s/{old}/{new}/g"))
    given = draw(st.sampled_from(["", "-e "]))
    text = f"sed {option} {given}{expression} {draw(quoted(path))}"
    return Built(text, writes=[(path, f"`{old}` → `{new}` (sed)")])


COMMAND = st.one_of(echo(), commit(), cat_heredoc(), tee_heredoc(), sed())
SEPARATORS = st.sampled_from(["; ", " && ", " || ", " & ", ";"])
COMMENT = st.sampled_from(["", "  # sed -i 's/a/b/' f.py > g.py", " #cat > n.py <<EOF"])


@st.composite
def script(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """Lines of commands, each line's heredoc bodies after it; and the files it writes."""
    out: list[str] = []
    writes: list[tuple[str, str]] = []
    for line in draw(st.lists(st.lists(COMMAND, min_size=1, max_size=3), min_size=1, max_size=3)):
        text = line[0].text
        for command in line[1:]:
            text += draw(SEPARATORS) + command.text
        out.append(text + draw(COMMENT))
        for command in line:
            for delimiter, lines in command.heredocs:
                out.extend([*lines, delimiter])
            writes.extend(command.writes)
    return "\n".join(out), writes


@SETTINGS
@given(script())
@example(('git commit -m "cat > notes.py <<EOF"', []))
@example(
    ("tee -a 'notes.py' <<'EOF' # > x.py\n  EOF\n>\nEOF", [("notes.py", "appended (2 lines)")])
)
def test_a_built_command_changes_exactly_the_files_it_wrote(
    built: tuple[str, list[tuple[str, str]]],
) -> None:
    text, writes = built
    assert shell_changes(text) == writes, text
