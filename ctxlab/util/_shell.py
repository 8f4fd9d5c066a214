"""Shell commands read as the shell reads them: words, operators, redirections and heredocs.

The handover lists the files a command wrote (`pipeline/_changes.py`). Patterns over the
command's text took what a quoted argument or a comment held for a redirection
(``git commit -m "cat > notes.py <<EOF"`` "wrote" notes.py). Here a command is read once, left
to right, as a POSIX shell (bash) splits it before running it:

- words, their quotes removed: ``'…'`` as written; ``"…"`` where a backslash escapes only
  ``$``, a backquote, ``"``, ``\\`` and a line break; ``\\x`` outside quotes; a backslash before
  a line break joins the lines;
- a comment: ``#`` where a word would start, to the end of its line;
- the operators that end a command: ``;``, ``&``, ``&&``, ``||``, ``|``, ``|&``, ``;;``, ``(``,
  ``)`` and a line break;
- redirections, each with the descriptor written before it and its target word: ``>``,
  ``>>``, ``>|``, ``&>``, ``&>>``, ``>&``, ``<``, ``<>``, ``<&``, ``<<<``, and heredocs
  (``<<``, ``<<-``) with their bodies — the lines after the command's line, up to the one
  that is the delimiter alone — which are never read as commands (nor expanded: a body is
  kept as written).

A quote left open, a redirection without a target, an operator with no command before it
(``; a``, ``a && || b``) or after it (``a |`` at the end) is a syntax error: bash runs the
lines before it and nothing from its line on, and so do the commands read here.

Not read: expansions (``$x``, globs: the words keep them as written); ``$(…)`` beyond its
parentheses (read as a group: the commands inside are commands); a substitution inside
``"…"`` (text of the word); keywords beyond a command's prefix (`Command.name`), so that a
``>`` inside ``[[ … ]]`` or ``(( … ))`` reads as a redirection.

Linear in the command: each character is read once by possessive patterns (nothing to
backtrack into); a heredoc's end is found line by line (`heredoc_body`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Command", "Redirect", "commands", "heredoc_body"]

# One token: blanks, a comment (``#`` where a word would start), a line continued, a word (runs
# of ordinary characters, quoted strings and escapes; a quote never closed stops it at the
# quote, where no token then matches: a syntax error) or an operator (a line break among them).
_TOKEN = re.compile(
    r"(?P<blank>[ \t]++)|(?P<comment>#[^\n]*+)|(?P<continued>\\\n)"
    r"""|(?P<word>(?:[^ \t\n'"\\;&|<>()]++|'[^']*+'|"(?:[^"\\]++|\\.)*+"|\\.|\\\Z)++)"""
    r"|(?P<operator>&>>|&>|&&|\|\||\|&|;;&|;;|;&|<<<|<<-|<<|<>|<&|>>|>&|>\||[;&|()<>\n])",
    re.S,
)
_PART = re.compile(r"""'([^']*+)'|"((?:[^"\\]++|\\.)*+)"|\\(.?)|([^'"\\]++)""", re.S)
_IN_DOUBLE = re.compile(r"""\\([$`"\\\n])""")  # what a backslash escapes inside "…"
_NUMBER = re.compile(r"[0-9]++")
_LEADING_TABS = re.compile(r"^\t++", re.M)  # (``match`` at a line's start: ``^`` holds)
_REDIRECTIONS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<>", "<&", "<<", "<<-", "<<<"})
_WRITES = frozenset({">", ">|", "&>", ">&"})
_APPENDS = frozenset({">>", "&>>"})
_KEYWORDS = frozenset({"!", "{", "if", "then", "else", "elif", "do", "while", "until", "time"})
"""Words before a command's name: its name follows them."""
_CONTINUED = frozenset({"|", "|&", "&&", "||"})
"""Operators a command must follow, on their line or the next."""
_WRAPPERS = frozenset({"sudo", "env", "command", "builtin", "exec", "nohup", "xargs"})
"""Commands that run the command named after them (and their options)."""


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection of a command."""

    operator: str
    """As written, without its descriptor: ``>``, ``>>``, ``&>``, ``<<``…"""
    target: str
    """The word it applies to, quotes removed (a heredoc's: its delimiter)."""
    descriptor: str | None = None
    """The file descriptor written before it (``"2"`` of ``2>``), or None."""
    body: str | None = None
    """A heredoc's body (its lines, the delimiter's line left out); None for the others."""

    @property
    def writes(self) -> str | None:
        """``"written"`` or ``"appended"`` when it writes its target as a file, else None
        (``>&2`` duplicates a descriptor; ``>&file`` writes, as ``&>file``)."""
        if self.operator in _APPENDS:
            return "appended"
        if self.operator == ">&" and (_NUMBER.fullmatch(self.target) or self.target == "-"):
            return None
        return "written" if self.operator in _WRITES else None

    @property
    def of_output(self) -> bool:
        """Whether it sends the command's output (descriptor 1) to its target."""
        if self.operator in ("&>", "&>>") or (self.operator == ">&" and self.writes):
            return True
        return self.writes is not None and self.descriptor in (None, "1")


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command: its words and redirections, in order."""

    words: tuple[str, ...]
    """Its words, quotes removed (assignments and keywords before its name included)."""
    redirects: tuple[Redirect, ...] = ()
    piped: bool = False
    """Its input is the previous command's output (it follows ``|`` or ``|&``)."""

    @property
    def name(self) -> str:
        """The command run: the first word after assignments (``A=1``), keywords (``then``,
        ``do``, ``!``…) and commands that run another (``sudo``, ``env``, ``xargs``… with their
        options); "" when there is none."""
        return self.words[self._start()] if self._start() < len(self.words) else ""

    @property
    def arguments(self) -> tuple[str, ...]:
        """The words after its name."""
        return self.words[self._start() + 1 :]

    @property
    def heredoc(self) -> str | None:
        """What a heredoc (or here-string) gives it as its input, or None: the last
        redirection of its input (descriptor 0) decides (``<<EOF <file``: the file)."""
        for redirect in reversed(self.redirects):
            if redirect.descriptor not in (None, "0") or redirect.operator[0] != "<":
                continue
            if redirect.operator == "<<<":
                return redirect.target + "\n"
            return redirect.body  # (None: a file's)
        return None

    def _start(self) -> int:
        at = 0
        wrapped = False
        for word in self.words:
            if word in _KEYWORDS or _assignment(word) or word in _WRAPPERS:
                wrapped = wrapped or word in _WRAPPERS
            elif not (wrapped and word.startswith("-")):
                break
            at += 1
        return at


def _assignment(word: str) -> bool:
    # ``NAME=value``: a name of ASCII letters, digits and underscores, not starting with a digit.
    name, equals, _value = word.partition("=")
    return bool(equals) and name.isascii() and name.isidentifier()


def heredoc_body(text: str, start: int, word: str, *, tabs: bool = False) -> tuple[str, int]:
    """A heredoc's body starting at ``start`` and where what follows it starts: the lines up
    to the first that is ``word`` alone (``tabs``: for ``<<-``, once its leading tabs are
    removed, as they are from the body's lines) — the whole rest when none is (bash warns and
    runs it). Each line is read once: its length compared with the word's first."""
    at = start
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        leading = _LEADING_TABS.match(text, at) if tabs else None
        first = leading.end() if leading else at
        if end - first == len(word) and text.startswith(word, first):
            return _body(text[start:at], tabs), min(end + 1, len(text))
        at = end + 1
    rest = text[start:]  # its last line ended, as the shell reads it
    return _body(rest if rest.endswith("\n") or not rest else rest + "\n", tabs), len(text)


def _body(lines: str, tabs: bool) -> str:
    return _LEADING_TABS.sub("", lines) if tabs else lines


def commands(text: str) -> list[Command]:
    """The simple commands of ``text``, in order, as a shell splits it (see the module's
    documentation). Never raises: a syntax error ends them before its line."""
    return _Reader(text).read()


def _unquote(raw: str) -> str:
    """A word's value: its quotes and escapes removed."""
    if "'" not in raw and '"' not in raw and "\\" not in raw:
        return raw  # (most words: read at the speed of ``in``)
    out: list[str] = []
    for part in _PART.finditer(raw):
        single, double, escaped, plain = part.groups()
        if plain is not None:
            out.append(plain)
        elif single is not None:
            out.append(single)
        elif double is not None:
            out.append(_IN_DOUBLE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), double))
        elif escaped != "\n":  # a backslash before a line break joins the lines
            out.append(escaped or "\\")  # a backslash ending the text stands for itself
    return "".join(out)


@dataclass
class _Built:
    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str, str | None]] = field(default_factory=list)
    """Each redirection's operator, target and descriptor."""
    bodies: dict[int, str] = field(default_factory=dict)
    """Its heredocs' bodies, by the index of their redirection."""
    piped: bool = False

    def command(self) -> Command:
        redirects = (Redirect(*r, self.bodies.get(n)) for n, r in enumerate(self.redirects))
        return Command(tuple(self.words), tuple(redirects), self.piped)


class _Reader:
    """One left-to-right reading of a command's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.done: list[_Built] = []
        self.current = _Built()
        self.line_start = 0  # the first command of the current line (in ``done``)
        self.last = "\n"  # the last operator read ("" after a word)
        # Heredocs whose bodies follow the current line: (command, redirect index).
        self.pending: list[tuple[_Built, int]] = []

    def read(self) -> list[Command]:
        fine = True
        while fine and self.pos < len(self.text):
            token = _TOKEN.match(self.text, self.pos)
            fine = token is not None and self._token(token)
        if fine and self._empty() and self.last in _CONTINUED:
            fine = False  # the text ends where a command must follow
        if fine:
            self._end(piped=False)
        else:  # a syntax error: bash runs nothing of its line, nor what follows
            del self.done[self.line_start :]
        return [built.command() for built in self.done]

    def _token(self, token: re.Match[str]) -> bool:
        """Reads ``token``; False at a syntax error."""
        self.pos = token.end()
        kind, value = token.lastgroup, token.group()
        if kind == "word":
            if value[0] in "0123456789" and _NUMBER.fullmatch(value) and self._at("<>"):
                # ``2>``: a redirection's descriptor.
                operator = _TOKEN.match(self.text, self.pos)
                self.pos = operator.end()  # type: ignore[union-attr]
                return self._redirect(operator.group(), value)  # type: ignore[union-attr]
            self.current.words.append(_unquote(value))
            self.last = ""
        elif value == "\n" and kind == "operator":
            self._newline()
        elif kind == "operator":
            return self._operator(value)
        return True  # blanks, a comment, a line continued

    def _newline(self) -> None:
        # After ``|``, ``&&`` or ``||`` the command goes on past the line break.
        continued = self._empty() and self.last in _CONTINUED
        if not continued:
            self._end(piped=False)
        self._bodies()
        if not continued:
            self.line_start = len(self.done)
            self.last = "\n"

    def _empty(self) -> bool:
        return not (self.current.words or self.current.redirects)

    def _end(self, *, piped: bool) -> None:
        if not self._empty():
            self.done.append(self.current)
        self.current = _Built(piped=piped)

    def _operator(self, operator: str) -> bool:
        """Reads an operator; False at a syntax error."""
        if operator in _REDIRECTIONS:
            return self._redirect(operator, None)
        if operator not in ("(", ")") and self._empty() and self.last != ")":
            return False  # no command before it (``; a``, ``a && || b``)
        self._end(piped=operator in ("|", "|&"))
        self.last = operator
        return True

    def _redirect(self, operator: str, descriptor: str | None) -> bool:
        """Reads a redirection's target; False when there is none (a syntax error)."""
        token = _TOKEN.match(self.text, self.pos)
        if token is not None and token.lastgroup == "blank":
            token = _TOKEN.match(self.text, token.end())
        if token is None or token.lastgroup != "word":
            return False
        self.pos = token.end()
        self.current.redirects.append((operator, _unquote(token.group()), descriptor))
        if operator in ("<<", "<<-"):
            self.pending.append((self.current, len(self.current.redirects) - 1))
        self.last = ""
        return True

    def _at(self, chars: str) -> bool:
        return self.pos < len(self.text) and self.text[self.pos] in chars

    def _bodies(self) -> None:
        """The bodies of the heredocs of the line just ended, in order, from ``pos``."""
        for built, index in self.pending:
            operator, word, _descriptor = built.redirects[index]
            body, self.pos = heredoc_body(self.text, self.pos, word, tabs=operator == "<<-")
            built.bodies[index] = body
        self.pending.clear()
