"""aider's LLM log (``--llm-history-file``, often ``.aider.llm.history``): every request aider
sent to the model, whole, and the reply it got — beside its chat history (`ctxlab.io.formats.aider.chat_history`),
which holds only what the user typed and read.

Read from aider's own writer (Aider-AI/aider, 2024–2026: ``aider/io.py``
``InputOutput.log_llm_history``, ``aider/coders/base_coder.py`` ``Coder.send``,
``aider/utils.py`` ``format_messages`` and ``format_content``). Each entry is a header line —
``TO LLM <time>`` before a request, ``LLM RESPONSE <time>`` after it (written even when the
request failed, then with nothing) — and its body:

- a request: each of its messages opens with a ``-------`` line, then every line of its content
  prefixed with the role in capitals (``SYSTEM …``, ``USER …``, ``ASSISTANT …``); a content of
  parts is written a part's field a line (``USER type: text``, ``USER text: …``, ``USER
  Image_url URL: …``), a field's later lines unprefixed;
- a reply: its lines prefixed ``ASSISTANT``.

Each request is the whole prompt: aider's System text, its example exchanges, the repository map
and the files it added (each followed by aider's own "Ok." as an assistant turn), the chat so far
and the new message. The transcript is the durable history, as for a trace
(`ctxlab.io.formats.otel.conversations.history_of`): what each request adds to the one before, then its
reply; a request that does not extend the history (aider re-sends its files after an edit, or
summarized the chat) adds what follows the last turn both share, and is counted in
``meta["rewritten_requests"]``. The prompt's own assistant turns (aider's examples and "Ok."s)
are kept as aider sent them, counted in ``meta["prompt_replies"]``: no model wrote them. The log
records no usage. Requests with another System text (architect mode's editor, another chat mode)
are another conversation: ``episode`` picks one (``meta["conversations"]``). The census counts
an entry a record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, image_block
from ctxlab.io.formats.otel.conversations import Call, conversations, history_of
from ctxlab.io.formats.otel.messages import Turn

__all__ = ["from_aider_llm", "is_aider_llm_history"]

_HEADER = re.compile(r"(TO LLM|LLM RESPONSE) ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8})")
_SEPARATOR = "-------"
_ROLE = re.compile(r"[A-Z][A-Z_]*+")
_ROLES = {"SYSTEM": "system", "USER": "user", "ASSISTANT": "assistant"}


def is_aider_llm_history(head: str) -> bool:
    """Whether a text's first characters hold an entry's header line of aider's LLM log (its
    first line, or one after a few stray lines)."""
    lines = head.splitlines()[:-1] or head.splitlines()  # the last may be cut by the head
    return any(_HEADER.fullmatch(line.rstrip()) is not None for line in lines)


@dataclass
class _Entry:
    kind: str
    """"TO LLM" or "LLM RESPONSE"."""
    line: int
    """The number of its header line."""
    time: str = ""
    """Its header's time: ``datetime.now().isoformat(timespec="seconds")``, local, no zone."""
    body: list[str] = field(default_factory=list)


def _entries(text: str) -> tuple[list[_Entry], int]:
    """The log's entries, and the lines with text before the first one."""
    entries: list[_Entry] = []
    before = 0
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.fullmatch(line.rstrip())
        if header is not None:
            entries.append(_Entry(header.group(1), number, header.group(2)))
        elif entries:
            entries[-1].body.append(line)
        elif line.strip():
            before += 1
    return entries, before


def _messages(body: list[str]) -> tuple[list[tuple[str, str, list[str]]], int]:
    """A request's messages — (role, its word in the log, its content lines) — and the lines
    before its first message (none, as aider writes it)."""
    messages: list[tuple[str, str, list[str]]] = []
    stray = 0
    for line in body:
        if line == _SEPARATOR:
            messages.append(("", "", []))
            continue
        if not messages:
            stray += bool(line.strip())
            continue
        role, word, content = messages[-1]
        if not word and not line.strip():
            continue  # an empty content: a line of nothing, not even its role
        if not word:
            found = _ROLE.match(line)
            word = found.group(0) if found else "USER"
            role = _ROLES.get(word, "user")
        if line == word or line.startswith(word + " "):
            line = line[len(word) + 1 :]
        messages[-1] = (role, word, [*content, line])
    return [m for m in messages if m[1]], stray


_PART_FIELD = re.compile(r"(type|text|Image_url URL): ")


def _blocks(lines: list[str]) -> list[dict[str, Any]]:
    """A message's blocks: its text, or its parts (``type: …`` then each field a line)."""
    if not (
        len(lines) > 1
        and lines[0] in ("type: text", "type: image_url")
        and _PART_FIELD.match(lines[1]) is not None
    ):
        text = "\n".join(lines)
        return [{"type": "text", "text": text}] if text.strip() else []
    blocks: list[dict[str, Any]] = []
    for line in lines:
        found = _PART_FIELD.match(line)
        if found is not None and found.group(1) == "text":
            blocks.append({"type": "text", "text": line[found.end() :]})
        elif found is not None and found.group(1) == "Image_url URL":
            blocks.append(image_block(line[found.end() :]))
        elif found is None and blocks and blocks[-1]["type"] == "text":
            blocks[-1]["text"] += "\n" + line  # a field's later lines are not prefixed
    return [b for b in blocks if b["type"] != "text" or b["text"].strip()]


def _call(number: int, request: _Entry, reply: _Entry | None) -> Call:
    messages, _ = _messages(request.body)
    system = ["\n".join(lines) for role, _, lines in messages if role == "system"]
    inputs: list[Turn] = [(role, _blocks(lines)) for role, _, lines in messages if role != "system"]
    outputs: list[Turn] = []
    if reply is not None:
        said = [line[10:] if line.startswith("ASSISTANT ") else line for line in reply.body]
        text = "\n".join("" if line == "ASSISTANT" else line for line in said).strip("\n")
        outputs = [("assistant", [{"type": "text", "text": text}])] if text.strip() else []
    return Call(
        start=number,
        group="trace:aider",
        system="\n\n".join(system),
        tools=(),
        inputs=inputs,
        outputs=outputs,
        usage=None,
        records=1 + (reply is not None),
        at=request.time,  # when the request was sent
        at_unit="iso",
    )


def _calls(entries: list[_Entry]) -> tuple[list[Call], int]:
    """Each request with the reply logged after it; the replies with no request before."""
    calls: list[Call] = []
    orphans = 0
    index = 0
    while index < len(entries):
        entry = entries[index]
        if entry.kind != "TO LLM":
            orphans += 1
            index += 1
            continue
        after = entries[index + 1] if index + 1 < len(entries) else None
        reply = after if after is not None and after.kind == "LLM RESPONSE" else None
        calls.append(_call(len(calls), entry, reply))
        index += 1 + (reply is not None)
    return calls, orphans


def from_aider_llm(
    text: str, where: str, episode: int | None = None
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation (episode ``episode``, by default the first), System text and notes of
    aider's LLM log."""
    entries, before = _entries(text)
    calls, orphans = _calls(entries)
    if not calls:
        msg = (
            f"{where}: no request in this aider LLM log (no 'TO LLM <time>' entry); load the "
            "log aider wrote with --llm-history-file, or its chat history "
            ".aider.chat.history.md"
        )
        raise MessageFormatError(msg)
    groups = conversations(calls)
    chosen = episode or 0
    if not 0 <= chosen < len(groups):
        msg = (
            f"{where}: no conversation {chosen}: the log holds {len(groups)} (episode=0 to "
            f"episode={len(groups) - 1}; each System text aider sent is one)"
        )
        raise MessageFormatError(msg)
    builder = ConversationBuilder(where, unit="entry")
    builder.record("line before the first entry", before)
    builder.skip("not an entry of aider's LLM log")
    builder.record("reply with no request before it", orphans)
    builder.skip("reply with no request before it")
    others = sum(c.records for n, g in enumerate(groups) if n != chosen for c in g)
    builder.record("logged request and reply", others)
    builder.skip("in another conversation (episode=N opens it)")
    rewritten, _ = history_of(builder, groups[chosen], "logged request and reply", "logged twice")
    notes: dict[str, Any] = {
        "log": "llm history",
        "requests": len(groups[chosen]),
        "conversations": len(groups),
        "episode": chosen,
        "prompt_replies": _prompt_replies(builder, groups[chosen]),
    }
    if rewritten:
        notes["rewritten_requests"] = rewritten
    unanswered = [n for n, call in enumerate(groups[chosen]) if not call.outputs]
    if unanswered:
        notes["unanswered_requests"] = unanswered  # failed or interrupted: aider logs nothing
    return builder, groups[chosen][0].system, notes


def _prompt_replies(builder: ConversationBuilder, calls: list[Call]) -> int:
    """The transcript's assistant turns that no logged reply wrote (aider's examples, its "Ok."
    after the repository map and each file): sent as the prompt, no request of their own."""
    replies = [blocks for call in calls for _, blocks in call.outputs]
    return sum(
        turn["role"] == "assistant" and turn["content"] not in replies for turn in builder.turns
    )
