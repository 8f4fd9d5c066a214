"""`lines_holding`: the lines of a text that a line-anchored pattern needing a word can match.

The summarizer and the retention grader scan every command's output (up to 40–60 k characters)
with line patterns — failure lines, test tallies, exit codes — at 10–15 MB/s: most of a
what-if's first load. A failure line must hold ``Error``, ``FAIL``, ``fatal:``…: ``str.find``
runs through a text at memory speed, and the pattern then reads only the lines that hold one.
The words and the patterns stay each module's own (this knows neither).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["lines_holding"]


def lines_holding(text: str, words: Iterable[str], *, lead: tuple[str, ...] = ()) -> str:
    """The lines of ``text`` holding one of ``words``, in order, joined by newlines — each
    with the blank lines just before it (a pattern's ``\\s*`` after ``^`` crosses them), and
    the lines that, white space aside, are one of ``lead`` (an optional prefix before ``\\s``,
    as pytest's ``E``, crosses them too).

    For a pattern compiled with ``re.MULTILINE`` whose every match lies within one line (or
    starts on blank lines before it) and holds one of ``words``, ``findall`` on the result
    finds what it finds on ``text``, in the same order; "" when no line holds a word."""
    starts: set[int] = set()
    for word in words:
        at = text.find(word)
        while at != -1:
            starts.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at + len(word))
            at = -1 if end == -1 else text.find(word, end)
    pieces: list[str] = []
    done = 0  # where the last piece ended: a blank run never reaches back past a kept line
    for start in sorted(starts):
        begin = start
        while begin > done:
            previous = text.rfind("\n", 0, begin - 1) + 1
            if text[previous : begin - 1].strip() not in ("", *lead):
                break
            begin = previous
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        pieces.append(text[begin:end])
        done = end + 1
    return "\n".join(pieces)
