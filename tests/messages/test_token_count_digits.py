"""A token count read from text takes ASCII digits only — every other character Python calls a
digit (superscripts, circled numbers, other scripts' digits) is refused, wherever it stands,
so the Hypothesis property on `token_count` cannot fail on the one it happens to draw: all of
them are tried here, every run."""

from __future__ import annotations

import sys

import pytest

from ctxlab.messages._usage import token_count

NON_ASCII_DIGITS = [
    c
    for c in map(chr, range(sys.maxunicode + 1))
    if (c.isdigit() or c.isdecimal() or c.isnumeric()) and not c.isascii()
]


def test_there_are_many_non_ascii_digits_to_try() -> None:
    # The control: the list is what it claims (it would be empty if the filter were wrong).
    assert {"¹", "①", "٣", "５", "Ⅻ"} <= set(NON_ASCII_DIGITS) and len(NON_ASCII_DIGITS) > 1_500


@pytest.mark.parametrize("shape", ["{}", "1{}", "{}1", " {} ", "12{}3"])
def test_no_non_ascii_digit_is_read_as_a_count(shape: str) -> None:
    accepted = []
    for digit in NON_ASCII_DIGITS:
        try:
            accepted.append((digit, token_count(shape.format(digit), "f")))
        except ValueError as exc:
            assert "usage field 'f' is" in str(exc)
    assert accepted == []


def test_ascii_digits_are_read_around_any_whitespace() -> None:
    for space in (" ", "\t", "\n", "\u00a0", "\u3000"):
        assert token_count(f"{space}1234{space}", "f") == 1234
    assert token_count("0" * 20, "f") == 0
    with pytest.raises(ValueError, match="usage field 'f' is"):
        token_count("1" * 21, "f")
