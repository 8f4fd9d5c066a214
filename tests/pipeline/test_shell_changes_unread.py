"""`shell_changes` reads a command only when it may edit (issue 54: reading every command of a
span was a tenth of a cold offline summary): without a ``>`` and without the names ``sed`` or
``tee`` once quotes, backslashes and line breaks are taken out, nothing is read — and what it
finds is always what reading every command finds (Hypothesis over shell-like text, and the
spellings bash unquotes into those names)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._changes as changes
from ctxlab.pipeline._changes import _read_changes, shell_changes

# The letters of the names, quotes, escapes, line breaks, operators and a file's name; the
# redirections that write no file (set aside before the test for a ``>``: i66-summ) and what
# may follow them.
_SHELL_TEXT = st.lists(
    st.sampled_from(
        [
            *"sedt'\"\\\n >|&;-ia/()",
            *("sed", "tee", " f.py", "s/a/b/", "<<EOF\nx\nEOF\n"),
            *("2>&1", ">&2", ">&12", "1.txt", "/dev/", "/dev/null", "\t", "<>", ">|"),
            *("..", "/..", "/dev/../f.txt", "shm", "."),  # a target that leaves /dev/: i66-rev
            *("/dev/shm/", "/dev/shm/f", "/dev/shm"),  # files on a tmpfs in /dev/: i67-clean
            # sed's options, in place or not, and what may stand between their letters
            *("sed -n ", "-n", "-ni", "-e", "-E", "--in-place", "--", "n", "p", "'1,2p' ", "\\\n"),
        ]
    ),
    max_size=30,
).map("".join)


@given(_SHELL_TEXT)
def test_what_it_finds_is_what_reading_every_command_finds(command: str) -> None:
    assert shell_changes(command) == _read_changes(command)


@pytest.mark.parametrize(
    "command",
    [
        "s'e'd -i 's/a/b/' f.py",  # quoted letters: bash runs sed
        's"e"d -i s/a/b/ f.py',
        "s\\ed -i s/a/b/ f.py",  # an escaped letter
        "echo x | t\\ee out.txt",
        "echo x | 'tee' -a out.txt",
        "sed -i s/a/b/ f.py",
        'sed "-n i" s/a/b/ f.py',  # a quoted cluster: its ``i`` after a blank (i69-summ)
        "sed -n\\\ni s/a/b/ f.py",  # a cluster continued on the next line
    ],
)
def test_a_name_bash_unquotes_into_sed_or_tee_is_read(command: str) -> None:
    found = shell_changes(command)
    assert found == _read_changes(command)
    assert found and found[0][0] in ("f.py", "out.txt")


def test_a_command_that_cannot_edit_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real = changes.commands
    monkeypatch.setattr(changes, "commands", lambda text: read.append(text) or real(text))
    assert shell_changes("ls -la src && grep -rn 'def main' .") == []
    assert shell_changes("python -m pytest tests/x.py -q") == []
    assert shell_changes("python -m pytest tests/x.py -q 2>&1 | tail -5") == []
    assert shell_changes("make test >/dev/null 2>&1; grep -c x log.txt >&2") == []
    assert read == []
    assert shell_changes("echo hi > notes.txt") == [("notes.txt", "written")]
    assert read == ["echo hi > notes.txt"]


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("echo x >&1.txt", "1.txt"),  # a number that does not end the word: a file
        ("make 2>&1x.py", "1x.py"),
        ("echo x >/dev.txt", "/dev.txt"),  # not under /dev/
        ("make >&2>out.txt", "out.txt"),  # a duplication, then a file
    ],
)
def test_a_redirection_that_only_looks_like_no_file_is_read(command: str, path: str) -> None:
    assert shell_changes(command) == _read_changes(command) == [(path, "written")]


@pytest.mark.parametrize(
    ("command", "path"),
    [
        # A target that climbs out of /dev/ is a file elsewhere: written, as bash writes it
        # (both the test for a ``>`` and the read took any ``/dev/…`` for a device: i66-rev).
        ("echo x >/dev/../tmp/f.txt", "/dev/../tmp/f.txt"),
        ("echo x > /dev/shm/../../tmp/f.txt", "/dev/shm/../../tmp/f.txt"),
        ("make 2>/dev/./../home/u/log.txt", "/dev/./../home/u/log.txt"),
        ("echo x | tee /dev/../tmp/f.txt", "/dev/../tmp/f.txt"),
    ],
)
def test_a_target_that_climbs_out_of_dev_is_a_file(command: str, path: str) -> None:
    assert shell_changes(command) == _read_changes(command) == [(path, "written")]


@pytest.mark.parametrize(
    "command",
    [
        "echo x >/dev/null",
        "echo x >/dev/./null",
        "echo x | tee /dev/../dev/stderr",
        "echo x >/dev/",  # the folder itself (resolved, ``/dev``)
        "make 2>/dev/null|tail -1 >&2",
    ],
)
def test_a_target_that_stays_in_dev_is_no_file(command: str) -> None:
    assert shell_changes(command) == _read_changes(command) == []


@pytest.mark.parametrize(
    ("command", "found"),
    [
        # /dev/shm/ is a tmpfs of plain files: what is written there is a file the command
        # changed (every target under /dev/ was taken for a device: i67-clean).
        ("echo x > /dev/shm/f", [("/dev/shm/f", "written")]),
        ("echo x >>/dev/shm/run.log", [("/dev/shm/run.log", "appended")]),
        ("make 2>/dev/./shm/err.txt", [("/dev/./shm/err.txt", "written")]),
        ("echo x | tee -a /dev/shm/a.txt /dev/null", [("/dev/shm/a.txt", "appended")]),
        ("cat <<EOF >/dev/shm/cfg\na\nb\nEOF", [("/dev/shm/cfg", "written (2 lines)")]),
    ],
)
def test_a_file_in_dev_shm_is_a_file(command: str, found: list[tuple[str, str]]) -> None:
    assert shell_changes(command) == _read_changes(command) == found


@pytest.mark.parametrize(
    "target",
    [
        "/dev/shm",  # the folder itself
        "/dev/shm/",
        "/dev/shm/../null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/fd/3",
        "/dev/mqueue/q",  # message queues, not files
        "/dev/shmx/f",
    ],
)
def test_the_devices_beside_dev_shm_are_no_file(target: str) -> None:
    for command in (f"echo x >{target}", f"echo x | tee {target}"):
        assert shell_changes(command) == _read_changes(command) == [], command


@pytest.mark.parametrize(
    ("target", "found"),
    [
        # A path opening with exactly two slashes: `posixpath.normpath` keeps them (POSIX
        # leaves ``//`` to the system), Linux reads them as one (i67-rev1).
        ("//dev/null", []),
        ("//dev/shm", []),  # the folder itself
        ("//dev/stdout", []),
        ("//dev/shm/f", [("//dev/shm/f", "written")]),
        ("//tmp/f.txt", [("//tmp/f.txt", "written")]),
    ],
)
def test_two_leading_slashes_are_one(target: str, found: list[tuple[str, str]]) -> None:
    for command in (f"echo x >{target}", f"echo x | tee {target}"):
        assert shell_changes(command) == _read_changes(command) == found, command


def _spelled(word: str) -> st.SearchStrategy[str]:
    """``word`` as bash may be given it: in quotes whole, or each letter bare, in quotes or
    escaped (a blank inside a word is quoted)."""
    ways = [
        lambda c: c if c not in " \t" else f"'{c}'",
        lambda c: f"'{c}'",
        lambda c: f'"{c}"',
        lambda c: f"\\{c}",
        lambda c: f"\\\n{c}" if c not in " \t" else f'"{c}"',  # a line continued inside the word
    ]
    picks = st.lists(st.sampled_from(ways), min_size=len(word), max_size=len(word))
    by_letter = picks.map(lambda chosen: "".join(w(c) for w, c in zip(chosen, word, strict=True)))
    return st.sampled_from([f"'{word}'", f'"{word}"']) | by_letter


# sed's words: options that edit in place (alone, in a cluster, long, with a suffix) or not,
# scripts and files; "-n i" is one word (a cluster holding an ``i`` after a blank).
_SED_WORD = st.sampled_from(
    [
        *("-i", "-ni", "-in", "-i.bak", "--in-place", "--in-place=.b", "-n i", "-si", "-n-i"),
        *("-n", "-E", "-e", "-s", "--quiet", "--", "-", "-ei", "-fi"),
        *("s/a/b/", "1,2p", "1i x", "f.py", "g-i.py", "x-y.txt"),
    ]
).flatmap(_spelled)


@settings(max_examples=400)
@given(st.lists(_SED_WORD, max_size=5), st.sampled_from([" ", "\t", " \\\n "]))
def test_a_sed_is_read_whenever_it_may_edit_in_place(words: list[str], blank: str) -> None:
    # `_MAY_EDIT_IN_PLACE` sets a sed aside unread only where no word can edit in place.
    command = blank.join(["sed", *words, "s/a/b/", "f.py"])
    assert shell_changes(command) == _read_changes(command), command
