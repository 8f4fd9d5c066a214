"""What the inventory's walk (`ctxlab.io._inventory`) asks of every field: of its name, of a
``type`` or ``role`` word, of the names an object holds — each answered once and kept (a file
repeats a few names and shapes thousands of times), by the rules of `ctxlab.io._findings`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxlab.io._findings import (
    _HOLDER,
    _TOKEN,
    CALL_HOLDER,
    CALL_LIST,
    CALL_TYPES,
    REASONING,
    REASONING_TYPES,
    REPLY_ROLES,
    key_flags,
)

__all__ = [
    "CALL_WORD", "FLAGS", "LEAVES", "LONGEST", "NODES", "NOT_MAPS", "NOT_PLAIN_LIST",
    "NOT_PLAIN_MAP", "NUMBERS", "PLAIN_TEXT", "REASONING_WORD", "REPLY_WORD", "SHAPES",
    "TOKEN_NAMES", "WORDS", "kept_key", "word",
]  # fmt: skip


class Memo(dict[Any, Any]):
    """Answers kept by what they answer (a file repeats a few names and shapes thousands of
    times): one not kept yet is made by ``answer`` and kept while there are fewer than
    `SHAPES`, when what it answers is short (`kept_key`): a hostile file of ever new or huge
    names stays bounded, and keeps nothing of its texts alive after its load. A dict asked by
    subscript, not `ctxlab.util._memo.Memo`: its answer costs no Python call when kept (the
    walk asks of every field of a file), where `Memo.keyed` is a method call each time."""

    def __init__(self, answer: Callable[[Any], Any]) -> None:
        super().__init__()
        self.answer = answer

    def __missing__(self, key: Any) -> Any:
        made = self.answer(key)
        if len(self) < SHAPES and kept_key(key):
            self[key] = made
        return made


LONGEST = 128
"""The longest name or word a memo keeps (real ones are a few dozen characters at most)."""


def kept_key(key: Any) -> bool:
    """Whether a memo may keep ``key``: a text of at most `LONGEST` characters, or a tuple of
    at most 64 names each as short."""
    if type(key) is str:
        return len(key) <= LONGEST
    if type(key) is tuple:
        return len(key) <= 64 and all(type(n) is not str or len(n) <= LONGEST for n in key)
    return True


REASONING_WORD, CALL_WORD, REPLY_WORD = 1, 2, 4


def word(given: Any) -> int:
    # What ``given`` (a ``type`` or a ``role``) names, its case folded: reasoning, a call, the
    # model's reply.
    if not isinstance(given, str):
        return 0
    folded = given.lower()
    return (
        (REASONING_WORD if folded in REASONING_TYPES else 0)
        | (CALL_WORD if folded in CALL_TYPES else 0)
        | (REPLY_WORD if folded in REPLY_ROLES else 0)
    )


SHAPES = 65_536
"""The most answers a memo keeps."""
WORDS = Memo(word)
"""A ``type`` or ``role`` text → what it names (`word`)."""
FLAGS = Memo(key_flags)
"""The name an object or a list is found under → `key_flags` (without the cache's call)."""
PLAIN_TEXT = Memo(lambda key: not (key_flags(key) & REASONING or "." in key))
"""Field name → whether a text under it holds nothing to find (not reasoning, not a span
attribute's JSON): asked of every text of a file."""
TOKEN_NAMES = Memo(lambda names: any(type(n) is str and key_flags(n) & _TOKEN for n in names))
"""Field names seen together → whether one names tokens: `is_usage`'s first question of an
object (`_may_be_usage`)."""
NOT_PLAIN_MAP = CALL_HOLDER | _HOLDER  # (under a usage name, an object may be usage)
NOT_PLAIN_LIST = CALL_LIST | REASONING
NUMBERS = frozenset({int, float, bool, type(None)})
NODES = frozenset({dict, list})
LEAVES = frozenset({str, int, float, bool, type(None)})
NOT_MAPS = LEAVES | {list}
