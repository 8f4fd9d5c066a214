"""The warnings a run printed, for the handover's next steps (`_next_steps.py`): a run that
passed while still printing warnings is not done, and the summary says so.

A warning line is Python's (``…: DeprecationWarning: …``, as pytest's warnings summary and a
script's stderr print it), a compiler's or a tool's (``warning: …``, ``file:3:5: warning: …``:
gcc, clang, rustc and cargo, git), or npm's ``npm WARN …``; a test tally counting warnings
(pytest's ``5 passed, 2 warnings in 0.1s``) says so too. The rules are this module's own.
"""

from __future__ import annotations

import re

from ctxlab.util._lines import lines_holding
from ctxlab.util._memo import Memo

__all__ = ["warning_lines"]

_WORDS = ("Warning: ", "warning: ", "WARNING: ", "npm WARN", "warning", "warnings")
_LINE = re.compile(
    r"^[^\S\n]*+(?:\S+?:\d+:(?:\d+:)?[^\S\n]*+)?"
    r"((?:[A-Z]\w*Warning|[Ww]arning|WARNING): \S.*|npm WARN \S.*)$",
    re.MULTILINE,
)
_TALLY = re.compile(r"\b[1-9]\d* warnings?\b.* in [\d.]+s\b")
_seen: Memo[str, tuple[str, ...]] = Memo(20_000)


def warning_lines(output: str) -> tuple[str, ...]:
    """The distinct warning lines of ``output`` (its first 40,000 characters), in order; a
    pytest tally counting warnings when no line says what they are."""
    return _seen.get(output, lambda: _scan(output[:40_000]))


def _scan(text: str) -> tuple[str, ...]:
    found = [" ".join(m.split()) for m in _LINE.findall(lines_holding(text, _WORDS[:4]))]
    if not found:
        found = [m.group(0).strip(" =") for m in _TALLY.finditer(lines_holding(text, _WORDS[4:]))]
    return tuple(dict.fromkeys(found))
