"""The text helpers of the span's reader (`_span.py`): a text flattened, its first line cut
short, the values and names a text of the agent holds (kept per text), and the files a command
names."""

from __future__ import annotations

import re

from ctxlab.util._memo import Memo

__all__ = ["files_named", "find_values", "flat", "short", "short_flat"]

# A value starts a run of word characters and dots: where no word character or dot precedes.
# Its first character is read before that look-behind (`(?<![\w.].)`: the character before it),
# so that the pattern opens with a character set and the engine skips, in its own loop, the
# positions no value can start at (white space, punctuation) instead of trying the look-behind
# at each (issue 54, i67-summ: 82 → 66 ms on the 5,891 texts of the held-out replays at 16k).
# A run of letters whose letters after the first are all lowercase ("the", "Then") is no value:
# no branch can match it (each needs a digit, a dot, an underscore or a second capital), and
# it is set aside after one read (`(?!…)` below) instead of being read by two branches and
# tried by the others (66 → 53 ms on the texts above: prose is mostly such words).
# Each branch then checks that first character with a look-behind of one (`(?<=v)`, `(?<=\d)`…)
# and reads on from it, as the branch written from its start (the branches, in their order):
#   (?:v?\d++(?:\.\d++)++|\d{2,}+)(?!\.*+\w)       a version or a number of 2+ digits
#   [A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++(?!\w)         a dotted name
#   _*+[a-z][a-z0-9]*+(?:_[a-z0-9]++)++(?!\w)        a snake_case name
#   [A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++(?!\w)      a CamelCase name
# (tests/retention/test_value_patterns.py: the same matches as each branch with its own
# look-behind). A number's digits are taken possessively and it ends where the dots that follow
# it lead to no word character (`(?!\.*+\w)`, as `(?![\w.]*\w)` in fewer steps): a digit given
# back is followed by a digit, which the look-ahead refuses anyway, and giving them back one by
# one, each time reading the rest of the run again, took the square of the run's length (issue
# 51: '1' * k + 'x'). The names' runs are possessive too: what a run gives back is a character
# of its own class, never the dot, underscore or capital the branch needs next, nor what its
# closing `(?!\w)` allows — so a plain word ("the") fails each branch at once instead of being
# read back letter by letter twice (issue 54, i66-summ).
_VALUE = re.compile(
    r"[\dA-Za-z_](?<![\w.].)(?!(?<=[A-Za-z])[a-z]*+(?![\w.]))(?:"
    r"(?<=v)\d++(?:\.\d++)++(?!\.*+\w)"
    r"|(?<=\d)\d*+(?:\.\d++)++(?!\.*+\w)"
    r"|(?<=\d)\d++(?!\.*+\w)"
    r"|(?<=[A-Za-z_])\w*+(?:\.[A-Za-z_]\w*+)++(?!\w)"
    r"|(?<=_)_*+[a-z][a-z0-9]*+(?:_[a-z0-9]++)++(?!\w)"
    r"|(?<=[a-z])[a-z0-9]*+(?:_[a-z0-9]++)++(?!\w)"
    r"|(?<=[A-Z])[a-z0-9]++(?:[A-Z][a-z0-9]*+)++(?!\w)"
    r")"
)
# The same pattern for an ASCII text (nearly all the agent writes): ``\w`` and ``\d`` read from
# the ASCII table, not the Unicode database — on such a text they match the same characters
# (53 → 44 ms on the texts above, 5,763 of them ASCII).
_VALUE_ASCII = re.compile(_VALUE.pattern, re.ASCII)


# A file a command names (`_span._read_call`: the files it reads): a path ending in a known
# extension, where no path character precedes. A run of path characters without a dot names no
# file, and is set aside after one read (`(?![\w/-]*+(?!\.))`) instead of being read by the
# path's parts and given back; an ASCII command is read by the `re.ASCII` twin (the same
# characters): 13.1 → 7.3 ms on the 2,518 commands of the held-out replays at 16k (i67-summ;
# tests/pipeline/test_word_file_pattern.py: the same matches as the pattern without the guard).
_WORD_FILE = re.compile(
    r"(?<![\w/.-])(?![\w/-]*+(?!\.))(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\."
    r"(?:py|pyi|js|ts|tsx|md|rst|txt|json|toml|ya?ml|cfg|ini|rs|go|java|c|h|cpp|sh|html|css|ex|"
    r"exs|rb)\b"
)
_WORD_FILE_ASCII = re.compile(_WORD_FILE.pattern, re.ASCII)


def files_named(command: str) -> list[str]:
    """The files ``command`` names (paths with a known extension), in order."""
    return (_WORD_FILE_ASCII if command.isascii() else _WORD_FILE).findall(command)


def flat(text: str) -> str:
    return " ".join(text.split())


def short(text: str, limit: int = 80) -> str:
    """``text``'s first non-empty line, flattened, cut at a word end with an ellipsis."""
    # A text already flat (a run's command, named in the discoveries) is cut alone: every white
    # space character but the space, and every line break, is unprintable (checked over all of
    # Unicode, i68-summ), so a printable text without two spaces running nor one at either end
    # is one line, flat (2,146 commands: 3.1 -> 1.4 ms).
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return short_flat(text, limit)
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return short_flat(flat(line), limit)


def short_flat(text: str, limit: int = 80) -> str:
    """`short` of a text already `flat` (one line, white space single spaces), cut alone: a
    command's line is not split and flattened again (`_span._read_call`: the span's commands,
    heredocs among them, 3.0 → 0.2 ms on the held-out replays at 16k, i68-summ)."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


_found: Memo[str, tuple[str, ...]] = Memo(20_000)


def find_values(text: str) -> list[str]:
    """The values and names a text of the agent holds, in order (not kept: `_values`)."""
    return (_VALUE_ASCII if text.isascii() else _VALUE).findall(text)


def _values(text: str) -> tuple[str, ...]:
    """The values and names a text of the agent holds, kept per text (as `_read_result`)."""
    return _found.keyed(text, _found_values)


def _found_values(text: str) -> tuple[str, ...]:
    return tuple(find_values(text))
