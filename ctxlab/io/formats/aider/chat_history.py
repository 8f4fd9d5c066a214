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
from ctxlab.io.formats.aider.prompts import (
    NOT_RECORDED,
    Item,
    answer_echo,
    is_command,
    items_of,
    prompting,
    rebuilt,
    same_lines,
    usage_of,
)
from ctxlab.messages import ProviderUsage

__all__ = ["from_aider", "is_aider_history"]

_START = "# aider chat started at "
# get_announcements (and, before 2024-04, the Coder's start): "Model: gpt-4o with diff edit
# format", "Main model: …", "Models: … weak model …", "Editor model: …".
_MODEL = re.compile(r"^(?P<role>Main model|Models?|Editor model): (?P<name>\S+)")


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
    for item in items_of(body):
        run.read(item)
    run.close()
    notes.update(run.notes())
    return builder, notes


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
        self.gap: list[Item] = []  # aider's output since the last reply line or input
        self.blank: Item | None = None  # an input of white space only, not yet placed
        self.last = ""  # the latest turn: "user", "assistant" (open), "closed" (billed)
        self.replies = 0
        self.editor_input = False
        self.last_reply = ""
        self.prompts: dict[str, int] = {}

    def read(self, item: Item) -> None:
        if item.kind == "input":
            self._flush_reply()
            self._skip_gap()
            self._skip_blank()
            if not item.text.strip():
                self.blank = item  # a prompt if a reply follows, else nothing
                self.last = "closed" if self.last == "assistant" else self.last
                return
            self.builder.record("user input line", len(item.lines))
            if is_command(item.text):
                self.builder.skip("aider command (its message, if it sends one, follows)")
                return
            self.builder.text("user", item.text)
            self.last = "user"
            # An architect's editor is run on the architect's reply as its input.
            self.editor_input = same_lines(item.text, self.last_reply)
        elif item.kind == "output":
            self.models.announced(item.text)
            usage = usage_of(item.lines[0][1:].strip())
            if usage is None:
                self.gap.append(item)
            else:
                self._report(item, usage)
        elif not item.text:
            self._blank(item)
        else:
            self._reply_lines(item)

    def _blank(self, item: Item) -> None:
        # Blank lines between aider's outputs or inputs (a reply's own are in its item).
        self.builder.record("reply line", len(item.lines))
        self.builder.skip("blank line")

    def _reply_lines(self, item: Item) -> None:
        if self.last == "assistant" and not self.blank and not prompting(self.gap):
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

    def _report(self, item: Item, usage: ProviderUsage) -> None:
        if self.last == "assistant" and not self.blank and not prompting(self.gap):
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
            kind, text = rebuilt(self.gap)
            lines, unit = sum(len(i.lines) for i in self.gap), "aider output line"
            self.gap.clear()
        if not text.strip():
            kind, text = "shown output", NOT_RECORDED  # never an empty turn: replies would merge
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


def _holds_messages(run: list[str]) -> bool:
    # An input or a reply line after the run's header (aider's own lines are quoted).
    for line in run[1:]:
        if line.startswith("####"):
            text = line[4:].strip()
            if text and not answer_echo(line[5:]) and not is_command(text):
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
