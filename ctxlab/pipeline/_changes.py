"""What an edit changed, written for the person (or model) taking over: the part that differs,
before and after — never the same text on both sides.

An editor's old/new strings (Claude Code's ``Edit`` and ``MultiEdit``, SWE-agent's
``str_replace_editor``) usually share their first lines (the context that locates the edit):
quoting the first line of each showed the same text twice. Here the lines both sides share at
the start and the end are left out, and a long line is shown from a little before its first
difference. Edits made through the shell are read too, the command read as bash reads it
(`ctxlab.util._shell`): ``sed -i 's/old/new/' file``, and a redirection or ``tee`` that writes
or appends to a file (with its number of lines when a heredoc is what it writes).

Nothing is cut inside a word: a side too long for its room ends at a word with " …".
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.util._shell import commands

__all__ = ["change", "edit_change", "shell_changes"]

_SIDE = 90  # characters a side shows
_CONTEXT = 24  # characters kept before the first difference of a long line
_LINE_BREAK = " ⏎ "
# A substitution's address (a line, a range or a pattern) and delimiter: the rest is read by
# `_substitution`, in time linear in the expression.
_SUBSTITUTE = re.compile(r"^(\d++(?:,\d++)?+|/[^/]*+/)?+s(.)", re.S)
_SED_FLAGS = "gIp0123456789"
_SED_SHOWN = 4  # expressions of one sed described
# ``5a\ text``, ``/pattern/i\ text``, ``3,7d``: lines added after, before, in place of, or
# deleted at an address (a line number or range, or a pattern).
_LINE_EDIT = re.compile(r"^(\d+(?:,\d+)?|/(?:[^/\\]|\\.)*/)\s*(?:([aic])\\?\s?(.*)|(d))$", re.S)
_FILE_WORD = re.compile(r"^[\w./~-]*[\w-]\.\w{1,8}$|^\.?/[\w./-]+$")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int = _SIDE) -> str:
    """``text`` within about ``limit`` characters, ended after a whole word with " …" (a
    first word longer than twice the room — a hash, a base64 blob — is cut where it must)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if text[limit] != " ":
        if " " in cut:
            cut = cut.rsplit(" ", 1)[0]
        else:
            word = text.split(" ", 1)[0]
            cut = word if len(word) <= 2 * limit else cut
    cut = cut.rstrip().removesuffix(_LINE_BREAK.strip()).rstrip()  # never end on a line break
    return cut + (" …" if len(cut) < len(text) else "")


def _side(lines: Sequence[str]) -> str:
    return _LINE_BREAK.join(f for ln in lines if (f := _flat(ln)))


def _from_difference(old: str, new: str) -> tuple[str, str]:
    """Both sides from a word or so before their first difference (with "… " when text is
    left out), so a long line changed near its end still shows the change."""
    shared = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        shared += 1
    if shared <= _CONTEXT + 8:
        return old, new
    start = old.rfind(" ", 0, shared - _CONTEXT) + 1  # at a word's start: never inside one
    if start <= 0:
        return old, new
    return "… " + old[start:], "… " + new[start:]


def change(old: str, new: str) -> str:
    """What replacing ``old`` by ``new`` changed: ```before` → `after``` over the lines that
    differ, ``added `…``` or ``removed `…```, or that nothing (or only white space) did."""
    if old == new:
        return "no change (the old and the new text are the same)"
    a, b = old.splitlines(), new.splitlines()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    gone, added = a[head : len(a) - tail], b[head : len(b) - tail]
    before, after = _side(gone), _side(added)
    if before == after:
        return f"white space changed in `{_clip(before or _side(a))}`"
    if not before:
        where = f" after `{_clip(_flat(a[head - 1]), 50)}`" if head else ""
        return f"added `{_clip(after)}`{_lines(added)}{where}"
    if not after:
        return f"removed `{_clip(before)}`{_lines(gone)}"
    before, after = _from_difference(before, after)
    shown_before, shown_after = _clip(before), _clip(after)
    if shown_before == shown_after:
        # One word longer than the room, changed past it: shown from the difference itself.
        pairs = enumerate(zip(before, after, strict=False))
        at = next((i for i, (x, y) in pairs if x != y), min(len(before), len(after)))
        shown_before = f"…{before[max(at - 10, 0) : at + 40]}…"
        shown_after = f"…{after[max(at - 10, 0) : at + 40]}…"
    return f"`{shown_before}`{_lines(gone)} → `{shown_after}`{_lines(added)}"


def _lines(lines: Sequence[str]) -> str:
    return f" ({len(lines)} lines)" if len(lines) > 2 else ""


def _written(content: object) -> str:
    # The file's lines are in the file: how many says what a person needs here.
    lines = content.splitlines() if isinstance(content, str) else []
    return f"written ({len(lines)} lines)"


def _said(how: str, lines: int | None) -> str:
    """``written`` or ``appended``, with the number of lines when the content is known."""
    return how if lines is None else f"{how} ({lines} lines)"


def _lines_of(text: str | None) -> int | None:
    # Counted once per command: a command may write its input to thousands of files.
    return None if text is None else len(text.splitlines())


def edit_change(values: Mapping[str, Any], *, writes: bool) -> str:
    """What one editor call changed, from its input (``writes``: the tool writes whole files)."""
    old = next((values[k] for k in ("old_string", "old_str", "old") if k in values), None)
    new = next((values[k] for k in ("new_string", "new_str", "new") if k in values), None)
    if isinstance(old, str) and isinstance(new, str):
        return change(old, new)
    edits = values.get("edits")
    if isinstance(edits, list) and edits:
        parts = [edit_change(e, writes=False) for e in edits if isinstance(e, Mapping)]
        more = f" (+{len(parts) - 2} more in this edit)" if len(parts) > 2 else ""
        return "; ".join(parts[:2]) + more
    inserted = new if isinstance(new, str) else values.get("text")
    if values.get("command") == "insert" or "insert_line" in values:
        line = values.get("insert_line", values.get("line"))
        where = f" after line {line}" if isinstance(line, int) else ""
        text = _side(str(inserted or "").splitlines())
        return f"inserted `{_clip(text)}`{where}"
    if writes or values.get("command") == "create":
        return _written(values.get("content", values.get("file_text", "")))
    return "edited"


# What a word loses when the shell unquotes it (`ctxlab.util._shell`): a command named ``sed``
# or ``tee`` is written with these letters in a row once they are taken out.
_UNQUOTED = str.maketrans("", "", "'\"\\\n")


# A ``>`` that writes no file: a descriptor duplicated (``2>&1``, ``>&2``: its target a number
# ending the word, which `Redirect.writes` reads as no write) or a redirection to a device
# named in ``/dev/`` itself (``/dev/null``, ``/dev/stderr``: a name without ``/`` or ``.``
# ending the word, a target `_read_changes` never reports — not ``/dev/../tmp/f`` nor
# ``/dev/shm/f``, files: `_device`). Taken out before the test for a ``>``. Each match
# consumes what it reads: a look-ahead over the rest of the word would read it again at each
# ``>`` (the square).
_NO_FILE = re.compile(r">&\d+(?=[\s;|&)]|$)|>[ \t]*/dev/[\w+-]*+(?=[\s;|&)<>]|$)")


def _device(path: str) -> bool:
    # A target under /dev/ once ``.`` and ``..`` are resolved (``/dev/../tmp/f`` is a file;
    # ``/dev/`` itself, a folder, resolves to ``/dev``) — but in /dev/shm/, a tmpfs of plain
    # files (``/dev/shm`` itself, a folder, is no file written; /dev/mqueue holds queues).
    resolved = posixpath.normpath(path)
    if resolved.startswith("//"):
        # Exactly two leading slashes, which normpath keeps (POSIX leaves them to the
        # system): on Linux one, ``//dev/null`` being /dev/null.
        resolved = resolved[1:]
    if resolved.startswith("/dev/shm/"):
        return False
    return resolved == "/dev" or resolved.startswith("/dev/")


# Where an option word that edits in place may be (`_sed_arguments`: ``-i``, ``-ni``,
# ``--in-place``; a word opening with ``-`` and holding an ``i``): a ``-`` after a quote or a
# backslash (``"-i"``, ``\\-i``: the word's value may open with it), or a ``-`` whose run of
# unquoted word characters reaches an ``i`` or a quote or backslash (past which the word may
# hold one). The run stops at the next ``-`` (read from there: each character is read once,
# where a run through ``----…`` from each of its dashes took the square). Without such a place
# no ``sed`` edits in place: ``sed -n '1,20p' f.py``, most of the commands that name sed
# without a ``>``, is not read (issue 54, i69-summ: 279 → 159 commands read in the held-out
# replays' summaries).
_MAY_EDIT_IN_PLACE = re.compile(r"""['"\\]-|-[^ \t\n'"\\;&|<>()i-]*+[i'"\\]""")


def shell_changes(command: str) -> list[tuple[str, str]]:
    """The files a shell command edits, each with what changed, read as the shell reads the
    command (`ctxlab.util._shell`: what a quoted argument, a comment or a heredoc's body holds
    is not a command): ``sed -i`` substitutions as before → after; a redirection (``>``,
    ``2>``, ``&>``…) or ``tee`` as a write, ``>>`` or ``tee -a`` as an append — with the number
    of lines when the command's input is a heredoc it passes on (``cat``, ``tee``)."""
    if ">" not in command or ">" not in _NO_FILE.sub("", command):
        # No redirection writes without a ``>`` (but those that write no file); without one,
        # only a command named ``sed`` or ``tee`` edits: a command holding neither name is not
        # read (43 % of the held-out corpus's commands; reading every command was a sixth of a
        # cold offline summary; with ``2>&1`` and ``>/dev/null`` set aside, 56 %: i66-summ).
        unquoted = command.translate(_UNQUOTED)
        if "tee" not in unquoted and (
            "sed" not in unquoted or not _MAY_EDIT_IN_PLACE.search(command)
        ):
            return []
    return _read_changes(command)


def _read_changes(command: str) -> list[tuple[str, str]]:
    """`shell_changes`, every command read."""
    found: list[tuple[str, str]] = []
    passed: str | None = None  # what the previous command sent down a pipe, when known
    for each in commands(command):
        given = each.heredoc
        if given is None and each.piped:
            given = passed
        name = each.name.rsplit("/", 1)[-1]
        if name == "sed":
            found.extend(_sed_changes(each.arguments))
        if name == "tee":
            found.extend(_tee_changes(each.arguments, _lines_of(given)))
        # ``cat`` and ``tee`` pass on what they are given (``cat`` when it reads no file but
        # its input, ``-``).
        files = [w for w in each.arguments if not w.startswith("-")]
        output = given if name == "tee" or (name == "cat" and not files) else None
        lines = _lines_of(output)
        for redirect in each.redirects:
            how = redirect.writes
            path = redirect.target
            if how is None or not _FILE_WORD.match(path) or _device(path):
                continue
            found.append((path, _said(how, lines if redirect.of_output else None)))
        passed = None if any(r.of_output for r in each.redirects) else output
    return found


def _tee_changes(arguments: Sequence[str], lines: int | None) -> list[tuple[str, str]]:
    """The files ``tee`` writes (``-a``, ``--append``: appends), with its input's ``lines``."""
    how = "written"
    files: list[str] = []
    options = True
    for word in arguments:
        if options and word == "--":
            options = False
        elif options and word.startswith("--"):
            how = "appended" if word == "--append" else how
        elif options and word.startswith("-") and word != "-":
            how = "appended" if "a" in word else how
        elif _FILE_WORD.match(word) and not _device(word):
            files.append(word)
    return [(path, _said(how, lines)) for path in files]


def _substitution(expression: str) -> tuple[str | None, str, str] | None:
    """The address, old and new text of ``s/old/new/flags`` (any delimiter, an address
    before it), as ``^(\\d+(?:,\\d+)?|/[^/]*/)?s(.)(.*?)(?<!\\\\)\\2(.*?)(?<!\\\\)\\2([gIp0-9]*)$``
    (DOTALL) reads it: the old text up to the first delimiter not after a backslash, the new
    text up to the first such delimiter followed by nothing but flags (and a final line
    break) — or None. In time linear in the expression (that pattern tried every pair of
    delimiters)."""
    head = _SUBSTITUTE.match(expression)
    if head is None:
        return None
    delimiter = head.group(2)

    def unescaped(start: int) -> int:
        at = expression.find(delimiter, start)
        while at > 0 and expression[at - 1] == "\\":
            at = expression.find(delimiter, at + 1)
        return at

    middle = unescaped(head.end())
    if middle < 0:
        return None
    # Only a delimiter followed by flags to the end can close the new text.
    flags = len(expression.removesuffix("\n").rstrip(_SED_FLAGS))
    last = unescaped(max(middle + 1, flags - 1))
    if last < 0:
        return None
    return head.group(1), expression[head.end() : middle], expression[middle + 1 : last]


def _sed_changes(arguments: Sequence[str]) -> list[tuple[str, str]]:
    """The substitutions and files of one ``sed`` that edits in place (``-i``), from its
    arguments (none when it does not edit in place)."""
    in_place, expressions, operands = _sed_arguments(arguments)
    if not in_place:
        return []
    if expressions is None:  # no -e nor -f: the first operand is the script
        expressions = operands[:1]
        operands = operands[1:]
    # The first few, the rest counted: a command of thousands of ``-e`` is one short line.
    described = "; ".join(_sed_expression(e) for e in expressions[:_SED_SHOWN])
    if len(expressions) > _SED_SHOWN:
        described += f" (+{len(expressions) - _SED_SHOWN} more in this sed)"
    return [(path, described) for path in operands if _FILE_WORD.match(path)]


def _sed_arguments(arguments: Sequence[str]) -> tuple[bool, list[str] | None, list[str]]:
    """Whether GNU sed's ``arguments`` edit in place, their ``-e`` expressions (None when no
    ``-e`` nor ``-f`` gives the script) and their operands. Options may follow operands (GNU
    sed permutes them) until ``--``; ``-i ''`` (BSD's empty suffix) is read as ``-i``: as a
    script it would be empty."""
    in_place = scripted = False
    expressions: list[str] = []
    operands: list[str] = []
    at = 0
    options = True
    while at < len(arguments):
        word = arguments[at]
        at += 1
        if not options or word == "-" or not word.startswith("-"):
            operands.append(word)
            continue
        if word == "--":
            options = False
            continue
        letter, value = _sed_option(word)
        if value is None:  # its value is the next word
            value = arguments[at] if at < len(arguments) else ""
            at += 1
        elif letter == "i" and not value and at < len(arguments) and arguments[at] == "":
            at += 1
        in_place = in_place or letter == "i"
        scripted = scripted or letter in ("e", "f")
        if letter == "e":
            expressions.append(value)
    return in_place, expressions if scripted else None, operands


_SED_LONG = {"in-place": "i", "expression": "e", "file": "f", "line-length": "l"}


def _sed_option(word: str) -> tuple[str, str | None]:
    """The option of an option word that matters here — ``i`` (in place; its value the
    backup suffix), ``e``, ``f``, ``l`` (each taking a value) or ``""`` (another) — and its
    value: the rest of the word (``-ibak``, ``-es/a/b/``, ``--expression=…``), or None when it
    is the next word. In a cluster (``-ni``) the first of these takes the rest of the word."""
    if word.startswith("--"):
        name, equals, value = word[2:].partition("=")
        letter = _SED_LONG.get(name, "")
        return letter, value if equals or letter in ("", "i") else None
    for offset, letter in enumerate(word[1:], 2):
        if letter in "iefl":
            rest = word[offset:]
            return letter, rest if rest or letter == "i" else None
    return "", ""


def _sed_expression(expression: str) -> str:
    substitution = _substitution(expression.strip())
    if substitution is not None:
        address, old, new = substitution
        where = f", line {address}" if address and address[0].isdigit() else ""
        return f"{change(old, new)} (sed{where})"
    line = _LINE_EDIT.match(expression.strip())
    if line is not None:
        address, verb, text, delete = line.groups()
        if address[0].isdigit():
            place = f"lines {address.replace(',', '-')}" if "," in address else f"line {address}"
        else:
            place = f"the lines matching `{_clip(address, 50)}`"
        if delete:
            return f"deleted {place} (sed)"
        text = _side(text.replace("\\n", "\n").splitlines()) or "(nothing)"
        where = "after" if verb == "a" else "before" if verb == "i" else "in place of"
        return f"added `{_clip(text)}` {where} {place} (sed)"
    return f"sed `{_clip(_flat(expression), 60)}`"
