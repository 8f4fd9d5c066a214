"""What an edit changed, as the handover writes it: the part that differs, before → after —
never the same text on both sides, never cut inside a word — for editor calls and for edits
made through the shell."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._changes import change, edit_change, shell_changes
from tests.strategies import SETTINGS

WORDS = st.sampled_from(["x", "return", "False", "None", "=", "if", "foo.bar", "(a)", "  ", "é"])
LINE = st.lists(WORDS, max_size=8).map(" ".join)
LINES = st.lists(LINE, max_size=5)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _sides(described: str) -> tuple[str, str] | None:
    match = re.fullmatch(r"`(.*)`(?: \(\d+ lines\))? → `(.*)`(?: \(\d+ lines\))?", described)
    return (match.group(1), match.group(2)) if match else None


def _shown_text(side: str) -> str:
    # A side as it stands in the text: without the markers of what was left out.
    return side.removeprefix("… ").removesuffix(" …").replace(" ⏎ ", " ")


@SETTINGS
@given(LINES, LINES, LINES, LINES)
def test_a_change_shows_text_that_differs_and_that_is_really_there(
    head: list[str], old: list[str], new: list[str], tail: list[str]
) -> None:
    # Edits share lines at their ends (the context an editor needs to find the place).
    before = "\n".join([*head, *old, *tail])
    after = "\n".join([*head, *new, *tail])
    described = change(before, after)
    if before == after:
        assert described.startswith("no change")
        return
    sides = _sides(described)
    if sides is None:
        # An insertion, a removal, or white space only: each says which.
        assert described.startswith(("added `", "removed `", "white space changed in `"))
        if described.startswith("white space"):
            assert _flat(before) == _flat(after) or [_flat(x) for x in before.splitlines()] == [
                _flat(x) for x in after.splitlines()
            ]
        return
    shown_before, shown_after = sides
    assert shown_before != shown_after
    # Each side is text of its own version (flattened), not invented, and a side cut short
    # ends where a word ends.
    for side, text in ((shown_before, before), (shown_after, after)):
        assert _ends_a_word(_shown_text(side), _flat(text.replace("\n", " ")), side.endswith("…"))


def _ends_a_word(shown: str, text: str, cut: bool) -> bool:
    at = text.find(shown)
    while at != -1:
        end = at + len(shown)
        if not cut or end == len(text) or text[end] == " ":
            return True
        at = text.find(shown, at + 1)
    return False


def test_an_edit_whose_sides_share_their_first_line_shows_what_differs() -> None:
    # The case that made 71 % of the "Changed" lines read `x` → `x`.
    old = "def __eq__(self, other):\n    return False  # sympy != other\n"
    new = "def __eq__(self, other):\n    return NotImplemented\n"
    assert change(old, new) == "`return False # sympy != other` → `return NotImplemented`"
    grown = "defp classify(lines) do\n  x = 1\nend"
    assert change(grown, grown.replace("x = 1", "x = 2\n  y = 3")) == "`x = 1` → `x = 2 ⏎ y = 3`"
    assert change("a\nb", "a\nX\nb") == "added `X` after `a`"
    assert change("a\nb\nc", "a\nc") == "removed `b`"
    assert change("a  b", "a b") == "white space changed in `a b`"


def test_a_long_line_changed_near_its_end_is_shown_from_near_the_change() -> None:
    line = "thinking_lines = Enum.filter(result, &(&1.kind == :thinking)) and then more words "
    described = change(line + "ok", line + "changed")
    # From a word about two dozen characters before the change.
    assert described == (
        "`… :thinking)) and then more words ok` → `… :thinking)) and then more words changed`"
    )
    # A side too long for its room ends after a whole word.
    long_old = "alpha " * 30 + "end"
    sides = _sides(change(long_old, "beta " * 30 + "end"))
    assert sides is not None and sides[0].endswith("alpha …") and sides[1].endswith("beta …")


def test_editor_calls_of_each_kind() -> None:
    multi = {
        "file_path": "a.py",
        "edits": [
            {"old_string": "a", "new_string": "b"},
            {"old_string": "c", "new_string": "d"},
            {"old_string": "e", "new_string": "f"},
        ],
    }
    assert edit_change(multi, writes=False) == "`a` → `b`; `c` → `d` (+1 more in this edit)"
    insert = {"command": "insert", "path": "a.py", "insert_line": 5, "new_str": "x = 1\ny = 2"}
    assert edit_change(insert, writes=False) == "inserted `x = 1 ⏎ y = 2` after line 5"
    create = {"command": "create", "path": "a.py", "file_text": "import os\nprint(1)\n"}
    assert edit_change(create, writes=False) == "written (2 lines)"
    assert edit_change({"file_path": "a.py", "content": "x\n"}, writes=True) == "written (1 lines)"
    # The demo's edit_file(path, old, new).
    assert edit_change({"path": "a.py", "old": "/ 10", "new": "/ 100"}, writes=False) == (
        "`/ 10` → `/ 100`"
    )


def test_edits_made_through_the_shell() -> None:
    assert shell_changes(
        "sed -i '316s/return False # other/return NotImplemented/' core/basic.py"
    ) == [("core/basic.py", "`return False # other` → `return NotImplemented` (sed, line 316)")]
    two = "sed -i 's/  conn.create/conn.create/' base.py && sed -i -e 's|a|b|g' x.py y.py"
    assert shell_changes(two) == [
        ("base.py", "white space changed in `conn.create` (sed)"),
        ("x.py", "`a` → `b` (sed)"),
        ("y.py", "`a` → `b` (sed)"),
    ]
    # Lines added, or deleted, at an address; a quoted expression over several lines.
    multi = "sed -i '402i\\\n    print(dt)' pkg/base.py"
    assert shell_changes(multi) == [("pkg/base.py", "added `print(dt)` before line 402 (sed)")]
    after = "sed -i '/xfailed = get(key)/a\\    print(x)' a.py"
    assert shell_changes(after) == [
        ("a.py", "added `print(x)` after the lines matching `/xfailed = get(key)/` (sed)")
    ]
    assert shell_changes("sed -i '3,7d' a.py") == [("a.py", "deleted lines 3-7 (sed)")]
    assert shell_changes("sed -i 'y/abc/xyz/' a.py") == [("a.py", "sed `y/abc/xyz/`")]
    assert shell_changes("cat <<'EOF' > reproduce.py\nimport x\nprint(1)\nEOF") == [
        ("reproduce.py", "written (2 lines)")
    ]
    assert shell_changes("echo hi >> notes.txt; grep foo a.py > /dev/null 2>&1") == [
        ("notes.txt", "appended")
    ]
    # Reading is not editing: sed without -i, a pipe into grep.
    assert shell_changes("sed -n '1,5p' a.py | grep x") == []
