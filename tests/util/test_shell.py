"""Shell commands read as bash reads them (`ctxlab.util._shell`): words with their quotes
removed, compared with what bash itself passes a command on texts made of quotes, escapes,
comments and blanks (hypothesis); operators, redirections and heredoc bodies on the cases that
matter; and in time linear in the command, however hostile."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from ctxlab.pipeline._changes import shell_changes
from ctxlab.util._shell import Command, Redirect, commands
from tests.hostile import assert_linear
from tests.strategies import SETTINGS, any_text

BASH = shutil.which("bash")
# Each command bash runs is not found (PATH is empty): the handler prints its words, each
# NUL-terminated, then \1.
HANDLER = 'command_not_found_handle() { printf "%s\\0" "$@"; printf "\\1"; }\n'

# Quotes, escapes, comments, blanks and line breaks: no expansion ($, globs, ~, braces), no
# operator, no assignment.
PIECES = st.sampled_from(
    ["a", "b.py", " ", "\t", "'", '"', "\\", "#", "\\'", '\\"', "\n", "\\\n", '"\\\\"', "\\#"]
)


def bash_commands(text: str) -> list[tuple[str, ...]]:
    """The words of each command bash runs for ``text``: the lines before a syntax error run,
    nothing of its line."""
    assert BASH is not None
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", HANDLER + text],
        capture_output=True,
        env={"PATH": "/nonexistent", "LC_ALL": "C.UTF-8"},
        check=False,
    )
    assert done.returncode in (0, 2), done.stderr  # 2: a quote left open
    runs = done.stdout.decode().split("\1")[:-1]
    return [tuple(run.split("\0")[:-1]) for run in runs]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@SETTINGS
@given(st.lists(PIECES, max_size=16).map("".join))
@example('x "s/a\\$/b\\"c/" x.py')  # inside "…" a backslash escapes $ and " (shlex kept \$)
@example("a\\\nb 'c\\\nd' \"e\\\nf\"")  # lines joined, except inside '…'
@example("a#b #c \\\nd")  # a comment starts where a word would, ends at the line's end
@example("x 'y' z\\")  # a backslash ending the text is itself
@example("a\nb 'c\nd\" e\nf")  # a quote left open: the lines before it run
def test_words_are_the_ones_bash_runs(text: str) -> None:
    # bash drops a backslash ending its input on some continued lines, not on others: a quirk
    # of its reader, not a rule (ours keeps it).
    assume(not text.endswith("\\") or "\n" not in text)
    assert [c.words for c in commands(text)] == bash_commands(text)


def test_operators_end_commands_and_a_pipe_says_so() -> None:
    assert commands("a 1; b 2 && c || d | e |& f & g\nh (i) ;; j") == [
        Command(("a", "1")),
        Command(("b", "2")),
        Command(("c",)),
        Command(("d",)),
        Command(("e",), piped=True),
        Command(("f",), piped=True),
        Command(("g",)),
        Command(("h",)),
        Command(("i",)),
        Command(("j",)),
    ]
    # Inside quotes, after a backslash, or in a word, they are text.
    assert commands("echo 'a;b' \"c|d\" e\\&\\&f g#h") == [
        Command(("echo", "a;b", "c|d", "e&&f", "g#h"))
    ]


def test_redirections_with_their_descriptors_and_targets() -> None:
    (command,) = commands("cmd >a 2>b &>c &>>d >>e 1>|f 2>&1 >&g <h 3<>i <<<'j k' 9>&-")
    assert command.words == ("cmd",)
    assert command.redirects == (
        Redirect(">", "a"),
        Redirect(">", "b", "2"),
        Redirect("&>", "c"),
        Redirect("&>>", "d"),
        Redirect(">>", "e"),
        Redirect(">|", "f", "1"),
        Redirect(">&", "1", "2"),
        Redirect(">&", "g"),
        Redirect("<", "h"),
        Redirect("<>", "i", "3"),
        Redirect("<<<", "j k"),
        Redirect(">&", "-", "9"),
    )
    writes = [(r.target, r.writes, r.of_output) for r in command.redirects]
    assert writes == [
        ("a", "written", True),
        ("b", "written", False),
        ("c", "written", True),
        ("d", "appended", True),
        ("e", "appended", True),
        ("f", "written", True),
        ("1", None, False),  # a descriptor duplicated: no file
        ("g", "written", True),  # >&word (not a number): bash's &>word
        ("h", None, False),
        ("i", None, False),
        ("j k", None, False),
        ("-", None, False),
    ]
    # A number is a descriptor only written against its operator.
    assert commands("echo 2 > a x2>b") == [
        Command(("echo", "2", "x2"), (Redirect(">", "a"), Redirect(">", "b")))
    ]
    # A redirection without a target is a syntax error: bash runs nothing from its line on.
    assert commands("echo a\necho >; echo b\necho c") == [Command(("echo", "a"))]
    assert commands("echo > #c") == []


def test_heredoc_bodies_are_not_commands() -> None:
    text = (
        "cat <<A > a.py; cat <<-'B' >b.py && echo done\n"
        "x = 1 # > not.py\n"
        "A\n"
        "\techo > not.py\n"
        "\tB\n"
        "echo after > c.py\n"
    )
    a, b, done, after = commands(text)
    assert a.heredoc == "x = 1 # > not.py\n"
    assert b.heredoc == "echo > not.py\n"  # <<-: its lines' leading tabs removed
    assert done == Command(("echo", "done"))
    assert after == Command(("echo", "after"), (Redirect(">", "c.py"),))
    # A delimiter never written: the body runs to the end (bash warns and runs it).
    (cat,) = commands("cat <<EOF >x.py\na\nb\n  EOF")
    assert cat.heredoc == "a\nb\n  EOF\n"
    # A here-string is one line of input; the last redirection of the input decides.
    assert commands("tee f.py <<< 'x y'")[0].heredoc == "x y\n"
    assert commands("cat <<EOF <a.txt\nx\nEOF")[0].heredoc is None
    assert commands("cat <a.txt 0<<EOF 3<<E\nx\nEOF\ny\nE")[0].heredoc == "x\n"


def test_a_quote_left_open_drops_its_line_only() -> None:
    # bash runs the lines before it, and nothing of its line.
    assert commands("echo a > b.py\necho c > d.py; echo 'e > f.py") == [
        Command(("echo", "a"), (Redirect(">", "b.py"),))
    ]
    assert commands('echo "x') == []
    assert commands("cat > '") == []


def test_a_commands_name_comes_after_assignments_keywords_and_wrappers() -> None:
    assert commands("A=1 B=2 sed -i x")[0].name == "sed"
    assert commands("if true; then sudo -E tee f.py; fi")[1].name == "tee"
    assert commands("env X=1 xargs -0 sed -n p")[0].arguments == ("-n", "p")
    assert commands("! time nohup tee -a log.txt")[0].name == "tee"
    assert commands("X=1")[0].name == ""


BODY = st.lists(
    st.sampled_from(["EOF", " EOF", "EOF ", "\tEOF", "\t", "x", "\n", " ", "EOFX", "'", "#", ">"]),
    max_size=14,
).map("".join)
OPENING = st.sampled_from(["<<EOF", "<<-EOF", "<<'EOF'", '<< "EOF"', "<<-\\EOF", '<<E"O"F'])


def bash_output(text: str, folder: Path) -> str:
    """What bash prints running ``text`` in ``folder``: ``cat`` and ``echo`` as they are, the
    words of any other command (not found) as the handler prints them."""
    assert BASH is not None
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", HANDLER + text],
        capture_output=True,
        cwd=folder,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        check=False,
    )
    return done.stdout.decode()


def printed(found: list[Command]) -> str:
    """What ``found`` prints, run as `bash_output` runs it."""
    out = []
    for command, following in zip(found, [*found[1:], None], strict=True):
        if any(r.of_output for r in command.redirects) or (following and following.piped):
            continue  # printed into a file or a pipe
        if command.words == ("cat",):
            out.append(command.heredoc or "")
        elif command.words[:1] == ("echo",):
            out.append(" ".join(command.words[1:]) + "\n")
        elif command.words:  # (redirections alone run nothing)
            out.append("".join(w + "\0" for w in command.words) + "\1")
    return "".join(out)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@SETTINGS
@given(OPENING, BODY)
@example("<<EOF", "a\n\n \nEOF ")  # blank lines are the body's; "EOF " is not the delimiter
@example("<<-EOF", "\ta\n\tEOF\nx")  # <<-: leading tabs go, from the body and the delimiter
@example("<<EOF", "EOF\nEOF >")  # after the delimiter, commands: a syntax error stops them
def test_a_heredocs_body_is_what_bash_gives_the_command(opening: str, body: str) -> None:
    text = f"cat {opening}\n{body}\necho after"
    with tempfile.TemporaryDirectory() as folder:  # (a line after the body may write a file)
        assert printed(commands(text)) == bash_output(text, Path(folder))


SHELL_TEXT = st.one_of(
    any_text,
    st.lists(
        st.sampled_from([*"'\"\\#;&|<>()\n\t 0123x", "<<EOF", "EOF", "2>&1", "&>", "<<-", "\\\n"]),
        max_size=30,
    ).map("".join),
)


@SETTINGS
@given(SHELL_TEXT)
def test_any_text_is_read_without_an_error(text: str) -> None:
    # Never raises: a syntax error ends the commands; no command is empty.
    for command in commands(text):
        assert command.words or command.redirects
        for redirect in command.redirects:
            assert redirect.writes in (None, "written", "appended")
    assert isinstance(shell_changes(text), list)


# Under mutation testing every call goes through mutmut's trampoline (several times slower):
# a shorter text there, where a timing proves nothing anyway.
LONG = 20_000 if "MUTANT_UNDER_TEST" in os.environ else 100_000
HOSTILE: dict[str, Callable[[int], str]] = {
    "quotes never closed": lambda n: "echo " + "'" + "a" * n,
    "double quotes of escapes never closed": lambda n: 'echo "' + "\\a" * (n // 2),
    "alternating quotes": lambda n: "echo " + "'\"" * (n // 2),
    "heredocs on one line": lambda n: "cat" + " <<EOF" * (n // 6) + "\nx\n",
    "heredocs on one line, each closed": lambda n: (
        "cat" + " <<E" * (n // 6) + "\n" + "E\n" * (n // 6)
    ),
    "heredocs of blank lines": lambda n: "cat <<EOF\n" + "\n" * n + "x",
    "redirections without targets": lambda n: "echo" + " >" * (n // 2),
    "descriptors": lambda n: "echo " + "2" * n + ">x",
    "comments": lambda n: "#" * n + "\n" + "a #" * (n // 3),
    "line continuations": lambda n: "echo " + "\\\n" * (n // 2),
    "operators": lambda n: "a" + ";&|<>()" * (n // 7),
    "words": lambda n: "x " * (n // 2),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_reading_is_linear(case: str) -> None:
    def make(n: int) -> Callable[[], object]:
        text = HOSTILE[case](n)
        return lambda: commands(text)

    # A reading that copies the rest of the text at each heredoc (memory speed) shows its
    # square only past a few hundred thousand characters.
    assert_linear(make, LONG, bound=5.0)
