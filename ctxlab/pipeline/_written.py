"""Which of a span's values a text already writes as a word of its own.

The offline summarizer (``_handover.py``) lists under "Values and names" only the numbers and
names the rest of its summary does not write: a word is a run of word characters and dots, its
dots at either end left out, so a value inside a longer name is not written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ctxlab.util._memo import Memo

__all__ = ["FINDS", "named_words", "parts_words", "unwritten", "written_as_word"]


_NAME = re.compile(r"[\w.]+")
FINDS = 16
"""Values checked by `written_as_word` (a search of the text each); more are checked against
the text's words (`named_words`), read once (the searches took the values times the text: at a
200k window, thousands of values against a long summary)."""


def unwritten(values: Iterable[str], text: str, *, parts: Sequence[str] | None = None) -> list[str]:
    """``values`` (each once, in order) that ``text`` does not write as a word of its own.
    ``parts``: the texts ``text`` joins with spaces, when it is such a join — their words are
    read part by part and kept (`parts_words`)."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) <= FINDS:
        return [v for v in distinct if not written_as_word(text, v)]
    words = named_words(text) if parts is None else parts_words(parts)
    # A plain word ("the") and the empty word are not among `named_words`: searched for (no
    # value the span's pattern finds is either).
    return [
        v
        for v in distinct
        if v not in words and not ((not v or _PLAIN.fullmatch(v)) and written_as_word(text, v))
    ]


# The words a value can be: a word of letters whose letters after the first are lowercase
# ("the", "Then": plain) is set aside after one read, as the span's value pattern sets it
# aside (`_span_text._VALUE`: no value it finds is plain), and not made into a string and
# hashed — 70 % of a summary's words (issue 54, i68-summ: the held-out replays' summary lines
# at 16k, 24.4 → 19.8 ms). The first character is read before the look-behind (`(?<!\w\w)`:
# no word character before it), so a word is only tried at its start; the rest is read
# possessively (a run of word characters, then dots followed by word characters: the same
# extent as a word, which ends at its last word character). A plain word followed by a dot
# ("done.") is still read: harmless, it is a word of the text all the same.
_NAMED = re.compile(r"\w(?<!\w\w)(?!(?<=[A-Za-z])[a-z]*+(?![\w.]))\w*+(?:\.++\w++)*+")
_PLAIN = re.compile(r"[A-Za-z][a-z]*")


def named_words(text: str) -> frozenset[str]:
    """``text``'s words — its runs of word characters and dots, the dots at either end left
    out (what `written_as_word` finds one value at a time; the empty word, a run of dots alone,
    is not among them) — that are not plain (a letter then lowercase letters alone, which no
    value is), with perhaps some plain ones: a word not plain is among them exactly when it is
    a word of ``text``. Read by the pattern alone: a set of Python strings built word by word
    cost as much as the searches it replaces."""
    return frozenset(_NAMED.findall(text))


_part_words: Memo[str, frozenset[str]] = Memo(20_000)


def parts_words(parts: Iterable[str]) -> frozenset[str]:
    """`named_words` of the texts ``parts`` joined with spaces (no word spans a space, so the
    words of the join are the parts' words together), each part's words read once and kept:
    the summaries of a what-if write the same command lines config after config, and reading
    the whole summary's words again was a third of the offline summarizer at 5,000 requests."""
    return frozenset().union(*_part_words.many(parts, named_words))


def written_as_word(text: str, value: str) -> bool:
    """Whether ``value`` is one of ``text``'s words: a run of word characters and dots, its
    dots at either end left out. Found with `str.find` and the characters around each hit: a
    value is a few of the span's names, the text the whole summary (splitting it into a set of
    words cost more than the finds)."""
    if not value:  # a run of dots alone is the empty word
        return any(not w.strip(".") for w in _NAME.findall(text))
    if value[0] == "." or value[-1] == "." or not _NAME.fullmatch(value):
        return False  # never what a word is, its end dots left out
    size = len(text)
    start = text.find(value)
    while start != -1:
        before, after = start, start + len(value)
        while before > 0 and text[before - 1] == ".":
            before -= 1
        while after < size and text[after] == ".":
            after += 1
        if not (before > 0 and _word_char(text[before - 1])) and not (
            after < size and _word_char(text[after])
        ):
            return True
        start = text.find(value, start + 1)
    return False


def _word_char(char: str) -> bool:
    # What ``\w`` matches in a str pattern: str.isalnum() and the underscore.
    return char.isalnum() or char == "_"
