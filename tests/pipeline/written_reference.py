"""The words of a text as `written_as_word` finds them one value at a time — the reference
`_written.named_words` and `unwritten` are checked against (the summarizer read every word this
way before issue 54's i68-summ; it reads `named_words` now)."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w(?:[\w.]*\w)?")


def words_of(text: str) -> frozenset[str]:
    """``text``'s words: its runs of word characters and dots, the dots at either end left
    out (the empty word, a run of dots alone, is not among them)."""
    return frozenset(_WORD.findall(text))
