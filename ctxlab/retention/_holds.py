"""Whether a text holds an item: at word boundaries (`holds`: ``view`` is not found inside
"Overview"), a path also by its last two components — and `HeldText`, a text asked about item
after item, which answers most of them from its words without a search.

A compaction's grade asks whether its summary, its pinned text and its kept tail hold each of
the span's items (hundreds): a search of the tail for each item that is not there read the
whole tail each time (three seconds of a 5,000-request what-if's grading, issue 54). An
occurrence at word boundaries holds each of the item's words (runs of word characters) whole,
as words of the text: an item one of whose words the text lacks is not held, found by set
lookups. Every other item is searched as `holds` searches, so the answers are `holds`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxlab.util._memo import Memo

__all__ = ["HeldText", "holds", "occurrence_end", "parts_words", "short_path"]

_WORD = re.compile(r"\w+")  # \w is `_word`: str.isalnum() or the underscore


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _occurs(text: str, item: str) -> bool:
    return occurrence_end(text, item) is not None


def occurrence_end(text: str, item: str, start: int = 0) -> int | None:
    """Where the first occurrence of ``item`` (not empty) in ``text`` at word boundaries ends,
    or None: a word character at an end of the item must not continue a longer word in the
    text. In a prefix of ``text`` that stops before white space (or at its end), ``item``
    occurs exactly when this end is within the prefix. None starts before ``start``."""
    # str.find, then the characters either side (regexes compiled per item cost 20x more).
    start = text.find(item, start)
    if start == -1:
        return None
    head, tail = _word(item[0]), _word(item[-1])
    size = len(text)
    while start != -1:
        end = start + len(item)
        if not (head and start > 0 and _word(text[start - 1])) and not (
            tail and end < size and _word(text[end])
        ):
            return end
        start = text.find(item, start + 1)
    return None


def short_path(item: str) -> str:
    """A path's last two components (``a/b/c.py``: ``b/c.py``), by which a text also holds it."""
    parts = [p for p in item.split("/") if p not in ("", ".")]
    return "/".join(parts[-2:]) if len(parts) >= 2 else parts[-1] if parts else ""


def holds(text: str, item: str, *, path: bool = False) -> bool:
    """Whether ``text`` (collapsed) holds ``item`` at word boundaries; a path also by its last
    two components."""
    if not item:
        return False
    if _occurs(text, item):
        return True
    if not path:
        return False
    short = short_path(item)
    return bool(short) and _occurs(text, short)


class HeldText:
    """``text`` (collapsed) asked whether it holds item after item, as `holds` answers; its
    ``words``, when given, are the words (``\\w+`` runs) of ``text`` (`parts_words` of the parts
    it joins with spaces)."""

    __slots__ = ("text", "words")

    def __init__(self, text: str, words: frozenset[str] | None = None) -> None:
        self.text = text
        self.words = frozenset(_WORD.findall(text)) if words is None else words

    def holds(self, item: str, *, path: bool = False) -> bool:
        """`holds` (``text``, ``item``, ``path``)."""
        if not item:
            return False
        if self._may_hold(item) and _occurs(self.text, item):
            return True
        if not path:
            return False
        short = short_path(item)
        return bool(short) and self._may_hold(short) and _occurs(self.text, short)

    def _may_hold(self, item: str) -> bool:
        return self.words.issuperset(_item_words.keyed(item, _words_of))


def _words_of(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text))


_item_words: Memo[str, tuple[str, ...]] = Memo(50_000)
_part_words: Memo[str, frozenset[str]] = Memo(20_000)


def parts_words(parts: Iterable[str]) -> frozenset[str]:
    """The words of ``parts`` joined with spaces (no word spans a space), each part's kept: a
    what-if grades the same kept messages compaction after compaction, config after config."""
    return frozenset().union(*_part_words.many(parts, _part_set))


def _part_set(part: str) -> frozenset[str]:
    return frozenset(_WORD.findall(part))
