"""What an edit changed, written for the person (or model) taking over: the part that differs,
before and after — never the same text on both sides.

An editor's old/new strings (Claude Code's ``Edit`` and ``MultiEdit``, SWE-agent's
``str_replace_editor``) usually share their first lines (the context that locates the edit):
quoting the first line of each showed the same text twice. Here the lines both sides share at
the start and the end are left out, and a long line is shown from a little before its first
difference. Edits made through the shell are read too: ``sed -i 's/old/new/' file`` and a
heredoc or redirect that writes a file.

Nothing is cut inside a word: a side too long for its room ends at a word with " …".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["change", "edit_change", "shell_changes"]

_SIDE = 90  # characters a side shows
_CONTEXT = 24  # characters kept before the first difference of a long line
_LINE_BREAK = " ⏎ "
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_WRITE = re.compile(r"(?<![<>&0-9])(>>?)\s*(['\"]?)([^\s'\";|&<>]+)\2")
_SED = re.compile(r"(?:^|[;&|(]\s*|\s)sed\s+((?:-[^\s]+\s+|--\S+\s+)*)")
# A substitution's address (a line, a range or a pattern) and delimiter: the rest is read by
# `_substitution`, in time linear in the expression.
_SUBSTITUTE = re.compile(r"^(\d++(?:,\d++)?+|/[^/]*+/)?+s(.)", re.S)
_SED_FLAGS = "gIp0123456789"
_SPACE = re.compile(r"\s*+")
# ``5a\ text``, ``/pattern/i\ text``, ``3,7d``: lines added after, before, in place of, or
# deleted at an address (a line number or range, or a pattern).
_LINE_EDIT = re.compile(r"^(\d+(?:,\d+)?|/(?:[^/\\]|\\.)*/)\s*(?:([aic])\\?\s?(.*)|(d))$", re.S)
_WORD = re.compile(r"""(?:'[^']*'|"(?:\\.|[^"\\])*"|\\.|[^\s'"\\])+""", re.S)
_QUOTED = re.compile(r"""'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)""", re.S)
_DOUBLE_ESCAPE = re.compile(r"""\\([\\"])""")  # what a backslash escapes inside "…" (shlex)
_SED_SCAN = 4_000  # characters of a command after ``sed -i`` read for its expressions and files
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


def shell_changes(command: str) -> list[tuple[str, str]]:
    """The files a shell command edits, each with what changed: ``sed -i`` substitutions as
    before → after, a redirect or heredoc as a write."""
    found: list[tuple[str, str]] = []
    for sed in _SED.finditer(command):
        if re.search(r"(?:^|\s)(?:-i\S*|--in-place\S*)", sed.group(1)):
            found.extend(_sed_changes(command[sed.end() :]))
    heredoc = _HEREDOC.search(command)
    for write in _WRITE.finditer(command):
        path = write.group(3)
        if not _FILE_WORD.match(path) or path.startswith("/dev/"):
            continue
        if heredoc is not None:
            body = command[command.find("\n", heredoc.end()) + 1 :]
            end = _heredoc_end(body, heredoc.group(2))
            found.append((path, _written(body[:end] if end is not None else body)))
        else:
            found.append((path, "appended" if write.group(1) == ">>" else "written"))
    return found


def _heredoc_end(body: str, word: str) -> int | None:
    """Where a heredoc's body ends: the start of the first line holding only ``word`` (and
    white space), as ``^\\s*WORD\\s*$`` (multiline) finds it — a run of blank lines before
    that line included — or None. Each line is read once: the pattern took the square of a
    run of blank lines' length (its ``\\s*`` crossed them again from each of their starts)."""
    start = 0
    while True:
        # The lines starting inside one run of white space all reach the same word.
        at = _SPACE.match(body, start).end()  # type: ignore[union-attr]
        if body.startswith(word, at):
            after = _SPACE.match(body, at + len(word)).end()  # type: ignore[union-attr]
            if after == len(body) or "\n" in body[at + len(word) : after]:
                return start
        line_end = body.find("\n", at)
        if line_end < 0:
            return None
        start = line_end + 1


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


def _sed_changes(rest: str) -> list[tuple[str, str]]:
    """The substitutions and files of one ``sed -i`` (what follows its options)."""
    words = _words(rest[:_SED_SCAN])
    expressions: list[str] = []
    files: list[str] = []
    taking_expression = True
    for word in words:
        if word in ("&&", "||", ";", "|") or word.startswith((">", "<")):
            break
        if word == "-e":
            taking_expression = True
            continue
        if taking_expression:
            expressions.append(word)
            taking_expression = False
        elif _FILE_WORD.match(word):
            files.append(word)
    described = [_sed_expression(e) for e in expressions]
    return [(path, "; ".join(described)) for path in files]


def _words(text: str) -> list[str]:
    """Shell words, their quotes removed, as POSIX ``shlex.split`` reads them (a test holds the
    two equal) — at regex speed: shlex was most of the summarizer's time on sed commands. A
    quote left open (a command cut at the scan's end) ends the words."""
    words: list[str] = []
    end = 0
    for match in _WORD.finditer(text):
        if "'" in text[end : match.start()] or '"' in text[end : match.start()]:
            break  # an unclosed quote: what follows is inside it
        words.append(_QUOTED.sub(_unquote, match.group()))
        end = match.end()
    return words


def _unquote(match: re.Match[str]) -> str:
    single, double, escaped = match.groups()
    if single is not None:
        return single
    if double is not None:
        return _DOUBLE_ESCAPE.sub(r"\1", double)
    return escaped


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
