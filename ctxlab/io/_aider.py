"""aider's chat history: ``.aider.chat.history.md`` in a repository.

Read from aider's own writer (Aider-AI/aider, ``aider/io.py``: ``InputOutput.user_input``,
``ai_output``, ``tool_output`` and ``append_chat_history``; 2024–2026), which appends Markdown:

- ``# aider chat started at <time>`` opens each run (one file holds many: ``episode`` picks one);
- the user's input, every line prefixed ``#### `` (the lines of one input joined by a
  two-space line break);
- the model's reply as it is;
- aider's own output (commands, applied edits, commits, token reports) as ``> `` quoted lines —
  not a message; a token report (``> Tokens: 2.4k sent, 1.1k cache hit, 180 received.``) is the
  usage of the reply before it.

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
    text: str, where: str, episode: int = 0
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of run ``episode`` of an aider history, and its notes."""
    runs = [part for part in re.split(rf"(?m)^{re.escape(_START)}", text) if part.strip()]
    if not 0 <= episode < len(runs):
        msg = f"{where}: no run {episode} (the history holds {len(runs)} runs, from 0)"
        raise MessageFormatError(msg)
    run = runs[episode]
    started, _, body = run.partition("\n")
    builder = ConversationBuilder(where)
    notes: dict[str, Any] = {"runs": len(runs), "started": started.strip()}
    user: list[str] = []
    reply: list[str] = []
    aider_lines = 0

    def flush_user() -> None:
        if user:
            builder.text("user", "\n".join(user).strip())
            user.clear()

    def flush_reply() -> None:
        if reply and "\n".join(reply).strip():
            builder.text("assistant", "\n".join(reply).strip())
        reply.clear()

    for line in body.splitlines():
        if line.startswith("#### ") or line == "####":
            flush_reply()
            user.append(line[5:].rstrip())
        elif line.startswith("> ") or line == ">":
            flush_user()
            flush_reply()
            aider_lines += 1
            usage = _usage(line[1:].strip())
            if usage is not None:
                builder.usage_of_last_reply(usage)
        else:
            flush_user()
            reply.append(line)
    flush_user()
    flush_reply()
    builder.skip("aider output line", aider_lines)
    return builder, notes


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
