"""What the model could read before each request of a recording, built once: next-use grading
asks, at every compaction, whether the text before the compacting request held an item, and
rebuilding that text at each compaction was quadratic in the recording (and a regex over it
per command).

`RecordingText` joins the recording's text once (`request_text` of every message, with the
system prompt) and keeps where the text of the first ``k`` messages ends: that text is a prefix
of the whole, followed by a space. An item occurs in a prefix exactly when its first occurrence
in the whole text ends within the prefix, so each item is looked up once per recording (kept),
and every compaction's question is a comparison. A session's `RecordingText` is kept while the
session is (`recording_text`): a what-if grades config after config on the same recording.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.retention._measure import message_parts, occurrence_end, request_text, short_path

__all__ = ["RecordingText", "command_end", "pattern_found", "plain_argument", "recording_text"]

Message = UserMessage | AssistantMessage
_WORD = re.compile(r"\w+")


class RecordingText:
    """The text of ``messages`` with ``system`` (`request_text`), and where the text of each
    prefix of the messages ends."""

    def __init__(self, messages: Sequence[Message], system: str = "") -> None:
        self.messages = messages
        self.system = system
        parts = request_text((), system)
        texts = [parts] if parts else []
        size = len(parts)
        ends = [size]
        for message in messages:
            for part in message_parts(message):
                size += len(part) + (1 if texts else 0)
                texts.append(part)
            ends.append(size)
        self.text = " ".join(texts)
        self.ends = ends
        """``ends[k]``: the length of the text of the first ``k`` messages (and the system)."""
        self._literal: dict[str, int | None] = {}
        self._words: dict[str, int] | None = None
        self._pattern: dict[tuple[str, str], int | None] = {}
        self.graded: dict[tuple[int, int | None, int], object] = {}
        """What a grader keeps by the compaction it asked about (`ctxlab.retention._next_use`)."""

    def holds(self, index: int, item: str, *, path: bool = False) -> bool:
        """Whether the text of the first ``index`` messages holds ``item`` (`holds`)."""
        if not item:
            return False
        end = self.ends[index]
        if _within(self._literal_end(item), end):
            return True
        short = short_path(item) if path else ""
        return bool(short) and _within(self._literal_end(short), end)

    def matches(self, index: int, first: str, argument: str, pattern: str) -> bool:
        """Whether ``pattern`` (`ctxlab.retention._next_use.command_pattern` of ``first`` and
        ``argument``, which starts neither with ``-`` nor a quote: one way to match from each
        start) finds a match in the text of the first ``index`` messages."""
        key = (first, pattern)
        if key not in self._pattern:
            # The argument follows the first word and a space, at least.
            after, earliest = self._earliest(first), self._earliest(argument)
            found = None
            if after is not None and earliest is not None:
                start = max(earliest, after + len(first) + 1)
                found = command_end(self.text, first, argument, pattern, start)
            self._pattern[key] = found
        return _within(self._pattern[key], self.ends[index])

    def _literal_end(self, item: str) -> int | None:
        if item not in self._literal:
            start = self._earliest(item)
            end = None if start is None else occurrence_end(self.text, item, start)
            self._literal[item] = end
        return self._literal[item]

    def _earliest(self, item: str) -> int | None:
        # Where an occurrence of ``item`` can start at the earliest (None: nowhere), by the
        # first place each of its words is a whole word of the text: an occurrence at word
        # boundaries (or a command's, whose first word and argument stand between spaces,
        # quotes and options) holds each of its words whole. Without this, a name first used
        # late in the recording was looked for from the start, for each name: quadratic.
        if self._words is None:
            self._words = {}
            for word in _WORD.finditer(self.text):
                self._words.setdefault(word[0], word.start())
        earliest = 0
        for word in _WORD.finditer(item):
            at = self._words.get(word[0])
            if at is None:
                return None
            earliest = max(earliest, at - word.start())
        return earliest


def _within(end: int | None, limit: int) -> bool:
    return end is not None and end <= limit


def command_end(text: str, first: str, argument: str, pattern: str, start: int = 0) -> int | None:
    """Where the first match of ``pattern`` (`ctxlab.retention._next_use.command_pattern` of
    ``first`` and ``argument``, which starts neither with ``-`` nor a quote) in ``text``
    (collapsed) ends, or None: the argument's occurrences in order (found by str.find, where the
    regex would try every position), each walked back over options to the first word; none
    starting before ``start``."""
    whole = re.compile(pattern)
    at = text.find(argument, start)
    while at != -1:
        opens = _command_start(text, first, at)
        if opens is not None:
            found = whole.match(text, opens)  # the regex decides (its lookahead, its rules)
            if found is not None:
                return found.end()
        at = text.find(argument, at + 1)
    return None


def pattern_found(text: str, first: str, pattern: str, end: int | None = None) -> bool:
    """Whether ``pattern`` (`ctxlab.retention._next_use.command_pattern` of ``first``) matches
    in ``text[:end]``, as `re.search` on it says: tried at each occurrence of ``first`` (found by
    str.find, where the regex engine would try its lookbehind at every position)."""
    size = len(text) if end is None else end
    whole = re.compile(pattern)
    start = text.find(first, 0, size)
    while start != -1:
        if whole.match(text, start, size) is not None:
            return True
        start = text.find(first, start + 1, size)
    return False


def plain_argument(argument: str) -> bool:
    """Whether a command's ``argument`` starts neither with ``-`` nor a quote: then its pattern
    matches one way from each start, and `command_end` finds its first end."""
    return bool(argument) and argument[0] not in "-'\""


def _command_start(text: str, first: str, at: int) -> int | None:
    # Where ``first`` starts if the text before ``at`` is it, then options (words starting
    # with ``-``), then a space and an optional quote; None if not. The text's white space
    # is single spaces (collapsed).
    space = at - 1
    if space > 0 and text[space] in "'\"":
        space -= 1
    if space < 1 or text[space] != " ":
        return None
    while True:
        start = space - len(first)
        if start >= 0 and text.startswith(first, start) and not _joined(text, start):
            return start
        word = text.rfind(" ", 0, space) + 1
        if word == 0 or not text.startswith("-", word) or word == space:
            return None
        space = word - 1


def _joined(text: str, start: int) -> bool:
    # The command's lookbehind: its first word does not continue a word, a path or an option.
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_./-")


_kept: list[RecordingText] = []
_KEEP = 4


def recording_text(messages: Sequence[Message], system: str = "") -> RecordingText:
    """The `RecordingText` of ``messages`` (a tuple: a recording's messages, which do not change)
    and ``system``, kept for the last few recordings asked about; a list is not kept (it may
    change)."""
    if not isinstance(messages, tuple):
        return RecordingText(messages, system)
    for kept in _kept:
        if kept.messages is messages and kept.system == system:
            return kept
    made = RecordingText(messages, system)
    _kept.insert(0, made)
    del _kept[_KEEP:]
    return made
