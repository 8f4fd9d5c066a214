"""Retention graded by what the recorded agent used next: after a compaction, the share of what
the agent's next replies refer to that the request the config built still holds.

The category retention (`ctxlab.retention._measure`) grades a span's items, which ctxlab's own
handover is built to carry; this measure grades only the items the recorded agent went on to
use, so a config that dropped what was needed scores low whatever its summary lists. What is
counted (also in the docs' retention page, to recompute it):

- the replies: the recorded assistant messages from the one the compacting request produced,
  at most ``replies`` of them (5 by default), none at or after the next compaction's reply;
- their items: ``paths`` (a tool's path argument, a path in a shell command or in the reply's
  text: `SHELL_PATH`, the repository root left out), ``commands`` (each simple command of a
  shell call — split at ``&&``, ``||``, ``;``, ``|`` — as its first word and first argument
  that is not an option; ``cd`` left out), ``identifiers`` (``snake_case``, ``CamelCase``,
  ``dotted.names`` of four characters or more in the reply's text and tool arguments, file
  contents it writes left out) and ``errors`` (failing test names and error lines the reply
  quotes);
- only items that appeared before the compaction (in the system prompt or the recorded
  messages before the request): an item a reply introduces fresh — a file it creates, a name
  it makes up — is nothing the context could have kept, and is reported apart (``fresh``);
- an item is held when the request's text (system prompt, summary, kept messages as sent)
  holds it as `holds` matches (a path also by its last two components); a command when the
  text holds its first word followed, after options only, by its argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.retention._before import (
    RecordingText,
    command_end,
    pattern_found,
    plain_argument,
    recording_text,
)
from ctxlab.retention._extract import (
    _EDITOR_WORDS,
    _FILE_NAME,
    _IDENTIFIER,
    _reasoning_strings,
    _scan_outcomes,
    _shell_command,
)
from ctxlab.retention._measure import holds, request_text
from ctxlab.retention._paths import SHELL_PATH, path_argument, roots
from ctxlab.util._checks import shown

__all__ = ["REPLIES", "NextUse", "UsedItem", "next_use", "next_use_columns", "used_items"]

Message = UserMessage | AssistantMessage
Kind = Literal["path", "command", "identifier", "error"]

REPLIES = 5
"""How many of the recorded agent's replies after a compaction are read, by default."""

_SIMPLE = re.compile(r"&&|\|\||[;|\n]")
_WORD = re.compile(r"""(['"])(.*?)\1|(\S+)""")
_ASSIGNMENT = re.compile(r"^\w+=")
_HEREDOC = re.compile(
    r"<<-?\s*(['\"]?)(\w+)\1[^\n]*(?:\n.*?)??(?:\n[ \t]*\2[ \t]*(?=\n|$)|\Z)", re.DOTALL
)
_REDIRECT = re.compile(r"^\d*(?:>>?|<<?|&>|>&)")


@dataclass(frozen=True)
class UsedItem:
    """One thing a reply referred to: its ``kind`` and its text."""

    kind: Kind
    text: str


@dataclass(frozen=True)
class NextUse:
    """One compaction graded by the replies that followed it (see the module)."""

    step: int
    """The compacting request's number in the replay."""
    items: tuple[UsedItem, ...] = ()
    """What the next replies used that appeared before the compaction: the graded items."""
    held: tuple[bool, ...] = ()
    """Whether the request holds each of ``items``."""
    fresh: tuple[UsedItem, ...] = ()
    """What the replies introduced that never appeared before: left out of the share."""
    floor: float | None = None
    """The share the latest message alone holds (with the system prompt): a config that kept
    nothing of the history scores this."""

    @property
    def share(self) -> float | None:
        """The share of ``items`` the request holds; None without items."""
        return sum(self.held) / len(self.items) if self.items else None

    @property
    def lost(self) -> tuple[UsedItem, ...]:
        """The items the request no longer holds."""
        return tuple(i for i, h in zip(self.items, self.held, strict=True) if not h)


def _command_items(command: str) -> list[str]:
    out: list[str] = []
    # A here-document's body is a file's text, not commands: its line ``EOF`` runs nothing.
    command = _HEREDOC.sub("\n", command)
    for part in _SIMPLE.split(command):
        words = _words(part)
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]  # ``FOO=1 pytest x``: the command is pytest
        if not words or words[0] in ("cd", "(", ")"):
            continue
        argument = next((w for w in words[1:] if not w.startswith("-")), None)
        if argument is not None and not argument.startswith("$("):
            out.append(f"{words[0]} {' '.join(argument.split())}")
        else:
            out.append(words[0])
    return out


def _words(part: str) -> list[str]:
    # A redirection and its target (``> out.txt``, ``2>&1``) are not the command's arguments.
    words: list[str] = []
    skip = False
    for m in _WORD.finditer(part):
        word = m.group(2) if m.group(1) else m.group(3)
        if skip:
            skip = False
        elif m.group(3) and _REDIRECT.match(word):
            skip = _REDIRECT.sub("", word) == ""  # ``>`` alone: its target is the next word
        elif word:
            words.append(word)
    return words


def _identifiers(text: str) -> list[str]:
    return [
        i
        # A path's parts (``tests/test_new.py``) are the path's, not names of their own.
        for i in _IDENTIFIER.findall(SHELL_PATH.sub(" ", text))
        if len(i) >= 4 and not _FILE_NAME.search(i) and i not in _EDITOR_WORDS
    ]


def _reply_items(reply: AssistantMessage) -> list[UsedItem]:
    paths: list[str] = []
    commands: list[str] = []
    said: list[str] = []
    for block in reply.content:
        if isinstance(block, TextBlock):
            said.append(block.text)
            paths.extend(SHELL_PATH.findall(block.text))
        elif isinstance(block, ToolUseBlock):
            command = _shell_command(block)
            if command is not None:
                commands.append(command)
                paths.extend(SHELL_PATH.findall(command))
            argument = path_argument(block)
            if argument is not None:
                paths.append(argument)
            said.extend(_reasoning_strings(block.input))
    out = [UsedItem("path", p) for p in paths]
    out += [UsedItem("command", c) for command in commands for c in _command_items(command)]
    out += [UsedItem("identifier", i) for text in said for i in _identifiers(text)]
    out += [UsedItem("error", e) for text in said for e in _scan_outcomes(text)]
    return out


def used_items(replies: Iterable[AssistantMessage]) -> tuple[UsedItem, ...]:
    """What ``replies`` refer to, each once in order of first use, the repository root (a
    directory most of the other paths sit under, a ``cd`` target) left out."""
    found = list(dict.fromkeys(i for r in replies for i in _reply_items(r)))
    paths = [i.text for i in found if i.kind == "path"]
    shell = [
        c
        for r in replies
        for b in r.content
        if isinstance(b, ToolUseBlock) and (c := _shell_command(b)) is not None
    ]
    root = set(roots(paths, shell))
    return tuple(i for i in found if not (i.kind == "path" and i.text in root))


def _held(text: str, item: UsedItem) -> bool:
    if item.kind != "command":
        return holds(text, item.text, path=item.kind == "path")
    first, _, argument = item.text.partition(" ")
    if not argument:
        return holds(text, first)
    pattern = command_pattern(first, argument)
    if plain_argument(argument):
        return command_end(text, first, argument, pattern) is not None
    return pattern_found(text, first, pattern)


def command_pattern(first: str, argument: str) -> str:
    """The first word, then options only, then the argument (quoted or not): ``grep -n foo``
    holds ``grep foo``. Linear: it opens with a literal, each option starts with ``-`` after
    space and ends at space, so text is consumed one way (tests/util/test_regex_audit.py
    audits it as built)."""
    return rf"(?<![\w./-]){re.escape(first)}(?:\s+-\S*)*\s+['\"]?{re.escape(argument)}" + (
        r"(?!\w)" if argument[-1].isalnum() or argument[-1] == "_" else ""
    )


def next_use(
    messages: Sequence[Message],
    index: int,
    request: str,
    *,
    step: int = 0,
    end: int | None = None,
    system: str = "",
    replies: int = REPLIES,
) -> NextUse:
    """The compaction whose request produced recorded reply ``messages[index]``, graded by the
    next ``replies`` replies (none at or after ``end``: the next compaction's reply) against
    ``request``, the text of the request the config built (`request_text` of its summary and
    kept messages, and ``system``). ``step`` is the request's number, kept for the reader."""
    if (
        isinstance(index, bool)
        or not isinstance(index, int)
        or not 0 < index <= len(messages)
        or (end is not None and (not isinstance(end, int) or end < index))
    ):
        msg = (
            f"index must be a reply's position in messages (1..{len(messages)}), got {shown(index)}"
        )
        raise UsageError(msg)
    if isinstance(replies, bool) or not isinstance(replies, int) or replies < 1:
        msg = f"replies must be a count of one or more, got {shown(replies)}"
        raise UsageError(msg)
    text = recording_text(messages, system)
    graded, fresh, floor = _grounds(text, index, end, replies)
    held = tuple(_held(request, i) for i in graded)
    return NextUse(step, graded, held, fresh, floor)


Grounds = tuple[tuple[UsedItem, ...], tuple[UsedItem, ...], float | None]


def _grounds(text: RecordingText, index: int, end: int | None, replies: int) -> Grounds:
    # What a compaction is graded on depends on where it is in the recording, never on the
    # config: kept with the recording's text, asked again by every config compacting there.
    key = (index, end, replies)
    if key not in text.graded:
        text.graded[key] = grounds(text, index, end, replies)
    kept: Grounds = text.graded[key]  # type: ignore[assignment]
    return kept


def grounds(text: RecordingText, index: int, end: int | None, replies: int) -> Grounds:
    """What the compaction whose request produced reply ``index`` of ``text``'s messages is
    graded on, whatever the config: the items the next ``replies`` replies (before ``end``)
    use that appeared before the request, those they introduce fresh, and the floor — the share
    the latest message (with the system prompt) holds."""
    messages = text.messages
    following = [m for m in messages[index:end] if isinstance(m, AssistantMessage)][:replies]
    graded: list[UsedItem] = []
    fresh: list[UsedItem] = []
    for item in used_items(following):
        (graded if _held_before(text, index, item) else fresh).append(item)
    latest = request_text(messages[index - 1 : index], text.system)
    floor = sum(_held(latest, i) for i in graded) / len(graded) if graded else None
    return tuple(graded), tuple(fresh), floor


def _held_before(text: RecordingText, index: int, item: UsedItem) -> bool:
    # `_held` on the text of the first ``index`` messages, without building it.
    if item.kind != "command":
        return text.holds(index, item.text, path=item.kind == "path")
    first, _, argument = item.text.partition(" ")
    if not argument:
        return text.holds(index, first)
    pattern = command_pattern(first, argument)
    if plain_argument(argument):
        return text.matches(index, first, argument, pattern)
    # An argument that may start where an option or a quote does: more than one way to match
    # from a start, so the first end is not found by the walk (rare: asked per compaction).
    return pattern_found(text.text, first, pattern, text.ends[index])


def next_use_columns(graded: Sequence[NextUse]) -> dict[str, float | None]:
    """A run's ``next_use_retention`` (the mean share over its compactions that have items)
    and ``next_use_floor`` (the same mean for the latest message alone)."""
    shares = [s for g in graded if (s := g.share) is not None]
    floors = [g.floor for g in graded if g.floor is not None]
    return {
        "next_use_retention": sum(shares) / len(shares) if shares else None,
        "next_use_floor": sum(floors) / len(floors) if floors else None,
    }
