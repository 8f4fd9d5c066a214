"""aider's chat history: ``.aider.chat.history.md`` in a repository.

Read from aider's own writer (Aider-AI/aider, ``aider/io.py``: ``InputOutput.user_input``,
``ai_output``, ``tool_output`` and ``append_chat_history``; 2024–2026), which appends Markdown:

- ``# aider chat started at <time>`` opens each run (one file holds many: ``episode`` picks one,
  by default the first that holds a message — aider starts a run at every launch, and many
  hold only its start-up lines);
- the user's input, every line prefixed ``#### `` (the lines of one input joined by a
  two-space line break);
- the model's reply as it is;
- aider's own output (commands, applied edits, commits, token reports) as ``> `` quoted lines —
  not a message; a token report (``> Tokens: 2.4k sent, 1.1k cache hit, 180 received.``) is the
  usage of the reply before it — after an input with no reply it is that request's bill, which
  no reply carries: counted as usage lost, "of a request with no reply recorded".

aider records no tool calls: it edits files from the reply's text (search/replace blocks).
"""

from __future__ import annotations

import re
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
    user: list[str] = []
    reply: list[str] = []

    def flush(role: str, kept: list[str], kind: str) -> None:
        if kept:
            builder.record(kind, len(kept))
            if not builder.text(role, "\n".join(kept).strip()):
                builder.skip("blank line")
            kept.clear()

    for line in body:
        if line.startswith("#### ") or line == "####":
            flush("assistant", reply, "reply line")
            user.append(line[5:].rstrip())
        elif line.startswith("> ") or line == ">":
            flush("user", user, "user input line")
            flush("assistant", reply, "reply line")
            builder.record("aider output line")
            usage = _usage(line[1:].strip())
            if usage is not None and builder.turns and builder.turns[-1]["role"] == "user":
                # An input with no reply since: the report bills that request (aider writes
                # one after an interrupted or empty answer), never the reply before it.
                builder.lose_usage("of a request with no reply recorded")
            elif usage is not None:
                builder.usage_of_last_reply(usage)
            else:
                builder.skip("aider output line")
        else:
            flush("user", user, "user input line")
            reply.append(line)
    flush("user", user, "user input line")
    flush("assistant", reply, "reply line")
    return builder, notes


def _holds_messages(run: list[str]) -> bool:
    # An input or a reply line after the run's header (aider's own lines are quoted).
    for line in run[1:]:
        if line.startswith("####"):
            if line[4:].strip():
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
