"""What aider wrote between two of its replies in ``.aider.chat.history.md`` (Aider-AI/aider
``aider/io.py``, ``aider/coders/base_coder.py``): its lines as items (an input, a quoted output,
a reply's text), and the prompt a request aider sent on its own carried — files added to the
chat, an edit error, the linter's output — rebuilt from them (`ctxlab.io.formats.aider.chat_history`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = [
    "ADDED_FILES",
    "NOT_RECORDED",
    "Item",
    "answer_echo",
    "is_command",
    "items_of",
    "prompting",
    "rebuilt",
    "same_lines",
    "usage_of",
]

# aider's prompt after files are added (aider/prompts.py ``added_files``, since 2024-07).
ADDED_FILES = "I added these files to the chat: {}\nLet me know if there are others we should add."


NOT_RECORDED = "(aider sent a request here whose prompt its history does not record)"


# What aider answers a reply with when it sends another request (base_coder.send_message and
# apply_updates): files added to the chat, an edit error, the linter's or the tests' output.
_ADD_FILES = ("Add file to the chat?", "Add these files to the chat?")


_REFLECTS = ("The LLM did not conform to the edit format.", "Exception while updating files:")


_FIX = ("Attempt to fix lint errors?", "Attempt to fix test errors?")


_LINT = "# Fix any errors below, if possible."


@dataclass
class Item:
    """A run's lines of one kind: the user's input, one output of aider's (its quoted line and
    the unquoted lines it goes on to), or reply lines (blank lines among them)."""

    kind: str  # "input", "output", "reply"
    lines: list[str]

    @property
    def text(self) -> str:
        """The item's text: an output's without its quote, an input's without its marks."""
        if self.kind == "input":
            return "\n".join(line[5:].rstrip() for line in self.lines).strip()
        if self.kind == "output":
            first = self.lines[0]
            first = first[4:] if first.startswith("####") else first[1:]
            return "\n".join([first.strip(), *self.lines[1:]]).strip()
        return "\n".join(self.lines).strip()


def _quoted(line: str) -> bool:
    return line.startswith("> ") or line.rstrip() == ">"


def _input_line(line: str) -> bool:
    return line.startswith("#### ") or line == "####"


def answer_echo(text: str) -> bool:
    # confirm_ask, answering for a group of files: "<question> (Y)es/(N)o… [Yes]: all".
    return "(Y)es/(N)o" in text and "]: " in text


def items_of(body: list[str]) -> list[Item]:
    """The run's lines as items, in order (consecutive reply lines one item)."""
    items: list[Item] = []
    index = 0
    while index < len(body):
        line = body[index]
        if _input_line(line) and not answer_echo(line[5:]):
            kind, end = "input", index + 1
        elif _quoted(line) or _input_line(line):
            kind, end = "output", index + 1
            if _goes_on(line, items):
                end = _output_end(body, index)
        else:
            kind, end = "reply", index + 1
        if items and kind != "output" and items[-1].kind == kind:
            items[-1].lines.extend(body[index:end])
        else:
            items.append(Item(kind, body[index:end]))
        index = end
    return items


def _goes_on(line: str, items: list[Item]) -> bool:
    """Whether a quoted line may go on unquoted: it lacks aider's closing break, and it is a
    token report or follows aider's output (a quote in a reply follows the reply's text)."""
    if line.endswith("  ") or not line.startswith("> "):
        return False
    before = next((i for i in reversed(items) if i.kind != "reply" or i.text), None)
    return usage_of(line[1:].strip()) is not None or (
        before is not None and before.kind == "output"
    )


def _output_end(body: list[str], index: int) -> int:
    # The output goes on to the first line that ends with aider's break; a quoted line, an
    # input or the end of the run before it: the quoted line was alone. Each search stops at
    # the next quoted line or input, so the run is scanned once in all. (A line of the output
    # may begin with ">" — ">>>>>>> REPLACE" in an edit error — without being quoted.)
    for end in range(index + 1, len(body)):
        line = body[end]
        if _quoted(line) or _input_line(line):
            break
        if line.endswith("  "):
            return end + 1
    return index + 1


def is_command(text: str) -> bool:
    # Commands.is_command: an input opening with "/" or "!" is aider's to run, never sent; one
    # that sends a message (/ask, /code, /architect …) writes it again as an input.
    return text[:1] in ("/", "!")


def same_lines(text: str, other: str) -> bool:
    def lines(value: str) -> list[str]:
        return [line.rstrip() for line in value.strip().splitlines()]

    return bool(text.strip()) and lines(text) == lines(other)


def _answer(text: str) -> str:
    # confirm_ask writes "<question> (Y)es/(N)o… [Yes]: y" (before 2024, "<question> y"): the
    # answer's first letter.
    words = text.split()
    return words[-1][:1].lower() if words else ""


def _question(text: str) -> bool:
    return "(Y)es/(N)o" in text


def prompting(gap: list[Item]) -> bool:
    """Whether aider's output after a reply says it sends another request (a reply whose token
    report the history lacks — aider before 2024 wrote none — still ends there)."""
    for item in gap:
        text = item.text
        if text.startswith(_REFLECTS):
            return True
        if text.startswith(_ADD_FILES + _FIX) and _answer(text) in ("y", "a"):
            return True
    return False


def rebuilt(gap: list[Item]) -> tuple[str, str]:
    """What aider sent after a reply, from its output between the two replies, and its kind:
    its ``added_files`` prompt; an edit error (``apply_updates``: the error after the notice
    and the link to aider's help on it); the linter's output (``lint_edited``, from its
    "# Fix any errors below" to the question); else the output shown, standing for a prompt
    the history does not hold (the tests' output, ``cmd_test``, is not written to it)."""
    added = _added_files(gap)
    if added:
        return "added files", ADDED_FILES.format(", ".join(added))
    texts = [item.text for item in gap]
    for at, text in enumerate(texts):
        if text.startswith(_REFLECTS):
            after = texts[at + 1 :]
            if after and text == _REFLECTS[0] and after[0].startswith("http"):
                after = after[1:]  # the link to the help on edit errors
            return "edit error", "\n".join(t for t in after if not _question(t)).strip()
        if text.startswith(_LINT):
            kept = []
            for line in texts[at:]:
                if _question(line) or line.startswith("Commit "):
                    break
                kept.append(line)
            return "lint errors", "\n".join(kept).strip()
    shown = "\n".join(t for t in texts if not _question(t)).strip()
    return "shown output", shown or NOT_RECORDED


def _added_files(gap: list[Item]) -> list[str]:
    """The files added to the chat after a reply: each named on aider's line before its
    question (``Add file to the chat?``, answered yes or all), or all those listed before
    ``Add these files to the chat?`` (aider before 2025)."""
    added: list[str] = []
    named: list[str] = []
    for item in gap:
        text = item.text
        if item.lines[0].startswith("####"):
            continue  # an answer echoed for the group: the quoted answer follows
        if text.startswith(_ADD_FILES[0]):
            if named and _answer(text) in ("y", "a"):
                added.append(named[-1])
            named = []
        elif text.startswith(_ADD_FILES[1]):
            if _answer(text) in ("y", "a"):
                added.extend(named)
            named = []
        elif text and not _question(text):
            named.append(text)
    return added


_TOKENS = re.compile(r"^Tokens:\s*(?P<body>.*)$")


# Each count read once, from where its digits begin (a look-behind, possessive repeats): over a
# line of thirty thousand digits the pattern is tried once, not at every digit with every split
# of them (which took the square of the line's length).
_COUNT = re.compile(
    r"(?<![\d.,])(?P<number>[\d.,]++)(?:\s*+(?P<unit>[kKmM]))?\s++"
    r"(?P<what>sent|received|cache write|cache hit)"
)


def usage_of(line: str) -> ProviderUsage | None:
    match = _TOKENS.match(line)
    if match is None:
        return None
    counts = {"sent": 0, "received": 0, "cache write": 0, "cache hit": 0}
    parts = list(_COUNT.finditer(match.group("body")))
    if not parts:
        return None  # "Tokens:" and no count: not a token report
    for part in parts:
        scale = {"k": 1_000, "m": 1_000_000}.get((part.group("unit") or "").lower(), 1)
        try:
            number = float(part.group("number").replace(",", "")) * scale
            counts[part.group("what")] = token_count(round(number), part.group("what"))
        except (ValueError, OverflowError):
            return None  # not a count ("1.2.3", thirty thousand digits): not a token report
    # aider's "sent" counts every prompt token, the cache's reads and writes among them.
    uncached = max(counts["sent"] - counts["cache write"] - counts["cache hit"], 0)
    return ProviderUsage(uncached, counts["received"], counts["cache hit"], counts["cache write"])
