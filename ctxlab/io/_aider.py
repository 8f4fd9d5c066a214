"""aider's chat history: ``.aider.chat.history.md`` in a repository.

Read from aider's own writer (Aider-AI/aider, ``aider/io.py``: ``InputOutput.user_input``,
``ai_output``, ``tool_output``, ``confirm_ask`` and ``append_chat_history``; and
``aider/coders/base_coder.py``: ``run_one``, ``send_message``, ``check_for_file_mentions``,
``show_usage_report``, ``get_announcements``; 2023–2026), which appends Markdown:

- ``# aider chat started at <time>`` opens each run (one file holds many: ``episode`` picks one,
  by default the first that holds a message — aider starts a run at every launch, and many
  hold only its start-up lines);
- the user's input, every line prefixed ``#### `` (the lines of one input joined by a
  two-space line break) — and, when a question is answered for a whole group of files, the
  answer echoed as an input (``#### Add file to the chat? … [Yes]: all``): aider's, not a
  message; and a command (``/ask …``, ``!ls``; ``Commands.is_command``) is never sent — one
  that sends a message writes it again as an input;
- the model's reply as it is;
- aider's own output (commands, applied edits, commits, questions and answers, token reports)
  as ``> `` quoted lines, each output ending with a two-space line break. An output of several
  lines is quoted on its first line only: a quoted line without the break goes on, unquoted,
  to the line that ends with one (the cost of a token report with cache reads and writes, an
  edit error, a hint);
- ``> Model: <name> with …`` (``Main model:``, ``Models:``, ``Editor model:``; aider's
  announcements at each start and model switch) names the models: ``meta["models"]``, and
  ``meta["reply_models"]`` the model of each reply (an architect's editor answers the input
  that repeats the architect's reply).

Every request aider bills writes one token report (``> Tokens: 2.4k sent, 1.1k cache hit, 180
received.``) after its reply: the report is that reply's usage and closes it. After a reply,
aider may send another request with no input of the user's: when files the reply mentions
are added to the chat (``Add file to the chat?`` answered yes: aider's ``added_files`` prompt,
"I added these files to the chat: …", rebuilt exactly), or when it reflects an edit error,
the linter's or the tests' output back to the model (what the history shows of it between the
two replies stands for that prompt: ``meta["unrecorded_prompts"]`` counts them). Either way
the next reply is a request of its own, never merged into the one before. A token report with
no reply since the last is a request with no reply recorded: its usage is counted lost. Quoted
lines inside a reply (before its token report, with reply text after them) are its text.

aider records no tool calls: it edits files from the reply's text (search/replace blocks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = ["from_aider", "is_aider_history"]

_START = "# aider chat started at "
_TOKENS = re.compile(r"^Tokens:\s*(?P<body>.*)$")
# Each count read once, from where its digits begin (a look-behind, possessive repeats): over a
# line of thirty thousand digits the pattern is tried once, not at every digit with every split
# of them (which took the square of the line's length).
_COUNT = re.compile(
    r"(?<![\d.,])(?P<number>[\d.,]++)(?:\s*+(?P<unit>[kKmM]))?\s++"
    r"(?P<what>sent|received|cache write|cache hit)"
)
# get_announcements (and, before 2024-04, the Coder's start): "Model: gpt-4o with diff edit
# format", "Main model: …", "Models: … weak model …", "Editor model: …".
_MODEL = re.compile(r"^(?P<role>Main model|Models?|Editor model): (?P<name>\S+)")
# aider's prompt after files are added (aider/prompts.py ``added_files``, since 2024-07).
ADDED_FILES = "I added these files to the chat: {}\nLet me know if there are others we should add."
_NOT_RECORDED = "(aider sent a request here whose prompt its history does not record)"
# What aider answers a reply with when it sends another request (base_coder.send_message and
# apply_updates): files added to the chat, an edit error, the linter's or the tests' output.
_ADD_FILES = ("Add file to the chat?", "Add these files to the chat?")
_REFLECTS = ("The LLM did not conform to the edit format.", "Exception while updating files:")
_FIX = ("Attempt to fix lint errors?", "Attempt to fix test errors?")
_LINT = "# Fix any errors below, if possible."


def is_aider_history(text: str) -> bool:
    """Whether ``text`` is an aider chat history (it opens with a run's header)."""
    return text.lstrip().startswith(_START)


def from_aider(
    text: str, where: str, episode: int | None = None
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of run ``episode`` of an aider history (None: the first run that holds
    a message — a run of aider's start-up lines alone holds none), and its notes."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_START)]
    if not starts:
        msg = (
            f"{where}: not an aider chat history — no '{_START.strip()} <time>' line, which "
            "aider writes at each launch; load .aider.chat.history.md, or the log aider wrote "
            "with --llm-history-file"
        )
        raise MessageFormatError(msg)
    runs = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    chosen = _chosen_run(runs, episode, where)
    builder = ConversationBuilder(where, unit="line")
    # The census is of the whole file: the other runs' lines are read, not this run's.
    builder.record("line outside this run", len(lines) - len(runs[chosen]))
    builder.skip("in another run (episode=N opens it)")
    header, *body = runs[chosen]
    builder.record("run header")
    builder.use()
    notes: dict[str, Any] = {
        "runs": len(runs),
        "episode": chosen,
        "started": header[len(_START) :].strip(),
    }
    run = _Run(builder)
    for item in _items(body):
        run.read(item)
    run.close()
    notes.update(run.notes())
    return builder, notes


@dataclass
class _Item:
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


def _answer_echo(text: str) -> bool:
    # confirm_ask, answering for a group of files: "<question> (Y)es/(N)o… [Yes]: all".
    return "(Y)es/(N)o" in text and "]: " in text


def _items(body: list[str]) -> list[_Item]:
    """The run's lines as items, in order (consecutive reply lines one item)."""
    items: list[_Item] = []
    index = 0
    while index < len(body):
        line = body[index]
        if _input_line(line) and not _answer_echo(line[5:]):
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
            items.append(_Item(kind, body[index:end]))
        index = end
    return items


def _goes_on(line: str, items: list[_Item]) -> bool:
    """Whether a quoted line may go on unquoted: it lacks aider's closing break, and it is a
    token report or follows aider's output (a quote in a reply follows the reply's text)."""
    if line.endswith("  ") or not line.startswith("> "):
        return False
    before = next((i for i in reversed(items) if i.kind != "reply" or i.text), None)
    return _usage(line[1:].strip()) is not None or (before is not None and before.kind == "output")


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


@dataclass
class _Models:
    """The models aider announces, and the model of each reply."""

    main: str | None = None
    editor: str | None = None
    named: list[str] = field(default_factory=list)
    of_reply: dict[str, str] = field(default_factory=dict)

    def announced(self, text: str) -> None:
        match = _MODEL.match(text)
        if match is None:
            return
        name = match.group("name").rstrip(",")
        if match.group("role") == "Editor model":
            self.editor = name
        else:
            self.main, self.editor = name, None
        if name not in self.named:
            self.named.append(name)

    def replied(self, rank: int, *, editor: bool) -> None:
        model = (self.editor or self.main) if editor else self.main
        if model:
            self.of_reply[str(rank)] = model


class _Run:
    """Reads one run's items into the builder: inputs, replies (one per request), the prompts
    aider sent with no input, token reports as usage, and its own lines counted."""

    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.models = _Models()
        self.reply: list[str] = []  # the reply being read (its lines, quotes inside it too)
        self.gap: list[_Item] = []  # aider's output since the last reply line or input
        self.blank: _Item | None = None  # an input of white space only, not yet placed
        self.last = ""  # the latest turn: "user", "assistant" (open), "closed" (billed)
        self.replies = 0
        self.editor_input = False
        self.last_reply = ""
        self.prompts: dict[str, int] = {}

    def read(self, item: _Item) -> None:
        if item.kind == "input":
            self._flush_reply()
            self._skip_gap()
            self._skip_blank()
            if not item.text.strip():
                self.blank = item  # a prompt if a reply follows, else nothing
                self.last = "closed" if self.last == "assistant" else self.last
                return
            self.builder.record("user input line", len(item.lines))
            if _command(item.text):
                self.builder.skip("aider command (its message, if it sends one, follows)")
                return
            self.builder.text("user", item.text)
            self.last = "user"
            # An architect's editor is run on the architect's reply as its input.
            self.editor_input = _same(item.text, self.last_reply)
        elif item.kind == "output":
            self.models.announced(item.text)
            usage = _usage(item.lines[0][1:].strip())
            if usage is None:
                self.gap.append(item)
            else:
                self._report(item, usage)
        elif not item.text:
            self._blank(item)
        else:
            self._reply_lines(item)

    def _blank(self, item: _Item) -> None:
        # Blank lines between aider's outputs or inputs (a reply's own are in its item).
        self.builder.record("reply line", len(item.lines))
        self.builder.skip("blank line")

    def _reply_lines(self, item: _Item) -> None:
        if self.last == "assistant" and not self.blank and not _prompting(self.gap):
            self._quotes_of_reply()
        elif self.last in ("assistant", "closed"):
            self._flush_reply()
            self._prompt()
        else:
            self._skip_gap()
            self._skip_blank()
        if self.last != "assistant":
            self.last = "assistant"
            self.models.replied(self.replies, editor=self.editor_input)
            self.replies += 1
            self.editor_input = False
        self.reply.extend(item.lines)

    def _quotes_of_reply(self) -> None:
        # aider writes nothing between a reply and its token report: quoted lines there (with
        # reply text after them, or the report) are the reply's own (the model's Markdown).
        for output in self.gap:
            self.reply.extend(output.lines)
        self.gap.clear()

    def _report(self, item: _Item, usage: ProviderUsage) -> None:
        if self.last == "assistant" and not self.blank and not _prompting(self.gap):
            self._quotes_of_reply()
        self._flush_reply()
        self._skip_gap()
        self._skip_blank()
        self.builder.record("aider output line", len(item.lines))
        if self.last == "assistant":
            self.builder.usage_of_last_reply(usage)
            self.last = "closed"
        else:
            # No reply since the last one was billed (or since the input): this report bills a
            # request whose reply aider did not write (interrupted, or an empty answer).
            self.builder.lose_usage("of a request with no reply recorded")

    def _prompt(self) -> None:
        """The user turn of a request aider sent with no input: its own prompt, or what the
        history shows between the two replies standing for it."""
        if self.blank is not None:
            # An input of white space only, sent all the same: aider's own word for it.
            kind, text, lines = "blank input", "<blank>", len(self.blank.lines)
            self._skip_gap()
            self.blank, unit = None, "user input line"
        else:
            kind, text = _rebuilt(self.gap)
            lines, unit = sum(len(i.lines) for i in self.gap), "aider output line"
            self.gap.clear()
        if not text.strip():
            kind, text = "shown output", _NOT_RECORDED  # never an empty turn: replies would merge
        self.prompts[kind] = self.prompts.get(kind, 0) + 1
        self.builder.record(unit, lines)
        self.builder.text("user", text)
        self.last = "user"

    def _flush_reply(self) -> None:
        if self.reply:
            self.builder.record("reply line", len(self.reply))
            text = "\n".join(self.reply).strip()
            self.builder.text("assistant", text)
            self.last_reply = text
            self.reply = []

    def _skip_blank(self) -> None:
        if self.blank is not None:
            self.builder.record("user input line", len(self.blank.lines))
            self.builder.skip("blank line")
            self.blank = None

    def _skip_gap(self) -> None:
        lines = sum(len(item.lines) for item in self.gap)
        if lines:
            self.builder.record("aider output line", lines)
            self.builder.skip("aider output line")
        self.gap.clear()

    def close(self) -> None:
        self._flush_reply()
        self._skip_gap()
        self._skip_blank()

    def notes(self) -> dict[str, Any]:
        notes: dict[str, Any] = {}
        if self.models.named:
            notes["models"] = list(self.models.named)
        if len(set(self.models.of_reply.values())) > 1:
            notes["reply_models"] = dict(self.models.of_reply)
        if self.prompts:
            notes["aider_prompts"] = dict(self.prompts)
            notes["inferred"] = (
                "the prompts aider sent with no input of the user's rebuilt from the history: "
                "its added-files prompt, the edit error or linter output it reflected; else "
                "aider's output between the two replies stands for it (unrecorded_prompts)"
            )
        if self.prompts.get("shown output"):
            notes["unrecorded_prompts"] = self.prompts["shown output"]
        return notes


def _command(text: str) -> bool:
    # Commands.is_command: an input opening with "/" or "!" is aider's to run, never sent; one
    # that sends a message (/ask, /code, /architect …) writes it again as an input.
    return text[:1] in ("/", "!")


def _same(text: str, other: str) -> bool:
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


def _prompting(gap: list[_Item]) -> bool:
    """Whether aider's output after a reply says it sends another request (a reply whose token
    report the history lacks — aider before 2024 wrote none — still ends there)."""
    for item in gap:
        text = item.text
        if text.startswith(_REFLECTS):
            return True
        if text.startswith(_ADD_FILES + _FIX) and _answer(text) in ("y", "a"):
            return True
    return False


def _rebuilt(gap: list[_Item]) -> tuple[str, str]:
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
    return "shown output", shown or _NOT_RECORDED


def _added_files(gap: list[_Item]) -> list[str]:
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


def _holds_messages(run: list[str]) -> bool:
    # An input or a reply line after the run's header (aider's own lines are quoted).
    for line in run[1:]:
        if line.startswith("####"):
            text = line[4:].strip()
            if text and not _answer_echo(line[5:]) and not _command(text):
                return True
        elif not line.startswith(">") and line.strip():
            return True
    return False


def _chosen_run(runs: list[list[str]], episode: int | None, where: str) -> int:
    # aider starts a run at every launch: many hold its start-up lines alone.
    full = [n for n, run in enumerate(runs) if _holds_messages(run)]
    listed = ", ".join(str(n) for n in full[:12]) + (", ..." if len(full) > 12 else "")
    if episode is None:
        if not full:
            msg = (
                f"{where}: none of the history's {len(runs)} runs holds a message (aider's "
                "start-up lines only)"
            )
            raise MessageFormatError(msg)
        return full[0]
    if not 0 <= episode < len(runs):
        msg = (
            f"{where}: no run {episode}: the history holds {len(runs)} runs (episode=0 to "
            f"episode={len(runs) - 1}; with messages: {listed or 'none'})"
        )
        raise MessageFormatError(msg)
    if episode not in full:
        msg = (
            f"{where}: run {episode} of the history's {len(runs)} holds no message (aider's "
            f"start-up lines only); runs with messages: {listed or 'none'} — pass one as episode="
        )
        raise MessageFormatError(msg)
    return episode


def _usage(line: str) -> ProviderUsage | None:
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
