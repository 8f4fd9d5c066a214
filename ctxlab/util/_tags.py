"""Paired tags (``<system-reminder>…</system-reminder>``) found in time linear in the text.

A lazy pattern such as ``<x>.*?</x>`` (DOTALL) scans from every opening tag to the end of the
text when the tag is never closed: a 160 kB reply of unclosed tags costs the square of its
length. `PairedTags` finds the same spans — left to right, never overlapping, each opening tag
with the first closing tag of the same name after it — by listing the closing tags once and
looking each opening tag's closer up in that list.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["PairedTags"]


class PairedTags:
    """``opener .*? closer`` (DOTALL) where the closer's group 1 names the opener's group 1,
    as the backreference ``<(name)>.*?</\\1>`` would pair them.

    Args:
        opener: Matches an opening tag; group 1 is its name.
        closer: Matches a closing tag; group 1 is its name. Two closing tags never overlap.
    """

    def __init__(self, opener: re.Pattern[str], closer: re.Pattern[str]) -> None:
        self.opener = opener
        self.closer = closer

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each paired span, in order."""
        closers: dict[str, tuple[list[int], list[int]]] = {}
        for found in self.closer.finditer(text):
            starts, ends = closers.setdefault(found.group(1), ([], []))
            starts.append(found.start())
            ends.append(found.end())
        spans: list[tuple[int, int]] = []
        position = 0
        none: tuple[list[int], list[int]] = ([], [])
        while (opening := self.opener.search(text, position)) is not None:
            starts, ends = closers.get(opening.group(1), none)
            index = bisect.bisect_left(starts, opening.end())
            if index == len(starts):
                position = opening.start() + 1  # never closed: not a span
                continue
            spans.append((opening.start(), ends[index]))
            position = ends[index]
        return spans

    def sub(self, replacement: str, text: str) -> str:
        """``text`` with each span replaced by ``replacement``."""
        parts: list[str] = []
        last = 0
        for start, end in self.spans(text):
            parts += [text[last:start], replacement]
            last = end
        parts.append(text[last:])
        return "".join(parts)
