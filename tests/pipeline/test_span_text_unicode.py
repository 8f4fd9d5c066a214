"""The summarizer's value and file patterns (`find_values`, `files_named`: a first-character
set, a guard setting plain words or dotless runs aside, an ASCII twin for ASCII texts) find what
the patterns before i67-summ found, on texts thick with what ``\\w`` and ``\\d`` read differently
with and without ``re.ASCII``: Unicode digits ('٣', '５'), letters ('é', 'ß', 'ǅ', the Kelvin
sign), digits that are no ``\\d`` ('²'), marks that are no ``\\w``, dots that are no '.', set
among the ASCII pieces the branches turn on (review i67-rev2)."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.pipeline._span_text import (
    _VALUE_ASCII,
    _WORD_FILE_ASCII,
    files_named,
    find_values,
    flat,
    short,
    short_flat,
)
from tests.strategies import SETTINGS

# The patterns in main before i67-summ (`git show main:ctxlab/pipeline/_span_text.py`, and
# `_span.py` for the file pattern).
OLD_VALUE = re.compile(
    r"(?<![\w.])(?:"
    r"(?:v?\d++(?:\.\d++)++|\d{2,}+)(?!\.*+\w)"
    r"|[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++(?!\w)"
    r"|_*+[a-z][a-z0-9]*+(?:_[a-z0-9]++)++(?!\w)"
    r"|[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++(?!\w)"
    r")"
)
OLD_WORD_FILE = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|ts|tsx|md|rst|txt|json|toml|"
    r"ya?ml|cfg|ini|rs|go|java|c|h|cpp|sh|html|css|ex|exs|rb)\b"
)

# What Unicode \w / \d read and ASCII ones do not (and the reverse traps: '²' is \w, not \d;
# a combining accent is neither; '．' and '·' are no '.').
UNICODE = ["٣", "５", "߀", "²", "é", "ß", "ǅ", "\u212a", "ſ", "Ω", "\u0301", "．", "·", "\u00a0"]
ASCII = [*"aZv_.1 9/-\n", "ab_cd", "FooBar", "1.2.3", "v2", "x.py", "src/", "..", ".rs", "Then"]
PIECES = st.sampled_from([*UNICODE, *ASCII])
# Any character too (surrogates included), among the pieces.
TEXTS = st.lists(st.one_of(PIECES, PIECES, st.characters(codec=None)), max_size=24).map("".join)


@SETTINGS
@given(text=TEXTS)
@example(text="v٣.٣ and ٣٣ x٣.y_é Fooé.Bar é_b ab_é")
@example(text="a\u212a.b Ab\u212aC ſ_x 1.2．3 ²² 12²")
def test_find_values_finds_what_the_old_pattern_found(text: str) -> None:
    assert find_values(text) == OLD_VALUE.findall(text)


@SETTINGS
@given(text=TEXTS)
@example(text="é/x.py ٣.py a/b٣.rs x.pyé ./é.md ../a\u0301.c")
def test_files_named_finds_what_the_old_pattern_found(text: str) -> None:
    assert files_named(text) == OLD_WORD_FILE.findall(text)


def test_the_twins_differ_where_the_text_is_not_ascii() -> None:
    # A control: on these the Unicode classes matter, so the ASCII twin chosen for a non-ASCII
    # text would find other values and files (the choice is per text: `str.isascii`).
    for text, values in (("٣٣ and x", ["٣٣"]), ("é_a_b x", [])):
        assert find_values(text) == values != _VALUE_ASCII.findall(text)
    for text, files in (("é/x.py", ["é/x.py"]), ("x.pyé", [])):
        assert files_named(text) == files != _WORD_FILE_ASCII.findall(text)


def short_before(text: str, limit: int) -> str:
    """`short` before i68-summ (the first non-empty line, flattened, then cut), kept here."""
    one = flat(next((ln for ln in text.splitlines() if ln.strip()), ""))
    return one if len(one) <= limit else one[:limit].rsplit(" ", 1)[0] + " …"


@given(
    st.text(st.sampled_from("ab .é\n\r\t\u2028\x85\xa0\u3000\x1c\x1f-"), max_size=300),
    st.integers(0, 120),
)
@SETTINGS
def test_a_flat_text_is_cut_as_short_cut_it_before(text: str, limit: int) -> None:
    # i68-summ: a command's line, already flat, is cut without being split and flattened again.
    assert short_flat(flat(text), limit) == short_before(flat(text), limit)
    assert short(text, limit) == short_before(text, limit)


@given(st.text(st.sampled_from("ab .é-"), max_size=40), st.integers(0, 30))
@example("a ", 80)
@SETTINGS
def test_a_printable_line_is_cut_as_short_cut_it_before(text: str, limit: int) -> None:
    # Printable texts alone: `short`'s way for a text already flat, and its edges (a space
    # at an end, two running).
    assert short(text, limit) == short_before(text, limit)


def test_no_white_space_nor_line_break_but_the_space_is_printable() -> None:
    # What `short` trusts to cut a printable text without flattening it.
    for code in range(0x110000):
        char = chr(code)
        if char != " " and (char.isspace() or len(f"a{char}b".splitlines()) > 1):
            assert not char.isprintable(), hex(code)
