"""The text helpers of the span's reader (`_span.py`): a text flattened, its first line cut
short, and the values and names a text of the agent holds (kept per text)."""

from __future__ import annotations

import re

from ctxlab.util._memo import Memo

__all__ = ["flat", "short"]

# Each branch starts where no word character or dot precedes: the look-behind is written once,
# before the branches, so that it is tried once a position, not once a branch (2.3x faster on
# the corpus, the same matches: tests/retention/test_value_patterns.py). A number's digits are
# taken possessively and it ends where the dots that follow it lead to no word character
# (`(?!\.*+\w)`, as `(?![\w.]*\w)` in fewer steps): a digit given back is followed by a digit,
# which the look-ahead refuses anyway, and giving them back one by one, each time reading the
# rest of the run again, took the square of the run's length (issue 51: '1' * k + 'x').
# The names' runs are possessive too: what a run gives back is a character of its own class,
# never the dot, underscore or capital the branch needs next, nor what its closing `(?!\w)`
# allows — so a plain word ("the") fails each branch at once instead of being read back letter
# by letter twice (issue 54, i66-summ: a quarter of this pattern's time on the held-out corpus).
_VALUE = re.compile(
    r"(?<![\w.])(?:"
    r"(?:v?\d++(?:\.\d++)++|\d{2,}+)(?!\.*+\w)"
    r"|[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++(?!\w)"
    r"|_*+[a-z][a-z0-9]*+(?:_[a-z0-9]++)++(?!\w)"
    r"|[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++(?!\w)"
    r")"
)


def flat(text: str) -> str:
    return " ".join(text.split())


def short(text: str, limit: int = 80) -> str:
    """``text``'s first non-empty line, flattened, cut at a word end with an ellipsis."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    one = flat(line)
    if len(one) <= limit:
        return one
    return one[:limit].rsplit(" ", 1)[0] + " …"


_found: Memo[str, tuple[str, ...]] = Memo(20_000)


def _values(text: str) -> tuple[str, ...]:
    """The values and names a text of the agent holds, kept per text (as `_read_result`)."""
    return _found.get(text, lambda: tuple(_VALUE.findall(text)))
