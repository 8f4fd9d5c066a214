"""Generated sessions of the two formats whose every field a consumer reads: ctxlab's own, which
`load` reads as written (no repair) — a meta line holding System, tools, usage by message, the
models, the recorded compactions with their summary's place, the flags a header shows, then
messages of either role in any order, each block of any modelled kind (a role's own or not),
with ids that answer a call, another's, or none — and Claude Code's, the richest recording
(responses a block a line, compaction and microcompaction boundaries with or without their
summary, sidechains, thinking in user lines, a session that opens with a reply). Values are
mostly sound and sometimes hostile: what a file holds is the user's, and every entry point must
open it or say why not."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.mutations import NUMBERS, hostile_values
from tests.strategies import any_text

_words = st.sampled_from(["", "Fix a.py", "ok", "x" * 3_000, "<b>markup</b>", "\x00", "¹²"])
text = _words | any_text
"""A block's text: plain, long, markup, control characters, any alphabet."""

_odd = hostile_values | st.sampled_from(NUMBERS)


@st.composite
def _or_odd(draw: st.DrawFn, sound: st.SearchStrategy[Any]) -> Any:
    """``sound`` nine times in ten, else a value no recorder writes (a file holds a dozen
    such values: more often, nearly every file is one `load` refuses)."""
    return draw(_odd if draw(st.integers(0, 9)) == 0 else sound)


def _index(length: int) -> st.SearchStrategy[Any]:
    """A message index of a session of ``length`` messages (or just past it), or an odd one."""
    return _or_odd(st.integers(-1, length + 1))


_tokens = st.integers(0, 10**6) | st.sampled_from([0, 1, 2**40])
"""A count a bill records: plausible, nothing, or the most ctxlab reads (`MAX_TOKENS`)."""

_KINDS = {
    "user": ("text", "text", "tool_result", "tool_result", "image", "document", "hint"),
    "assistant": ("text", "text", "tool_use", "tool_use", "thinking", "redacted_thinking"),
}
"""Each role's own kinds (a server tool's block, or any kind, in one block of six)."""


@st.composite
def _block(draw: st.DrawFn, role: str, calls: list[str]) -> dict[str, Any]:
    anything = ["provider", *_KINDS["user"], *_KINDS["assistant"]]
    kind = draw(st.sampled_from(anything if draw(st.integers(0, 5)) == 0 else _KINDS[role]))
    if kind == "text":
        return {"type": "text", "text": draw(text)}
    if kind == "hint":  # a harness hint, as ctxlab writes one
        return {"type": "text", "text": f"<system-reminder>{draw(text)}</system-reminder>"}
    if kind == "tool_use":
        # A new id, mostly; the last one again (a repeated id), sometimes.
        call = draw(st.sampled_from([f"t{len(calls)}"] * 4 + calls[-1:]))
        calls.append(call)
        return {
            "type": "tool_use",
            "id": call,
            "name": draw(st.sampled_from(["Read", "Bash", "x" * 300, "<b>", "¹"])),
            "input": draw(_or_odd(st.just({"a": 1}))),
        }
    if kind == "tool_result":
        # The latest calls, mostly; one never made, sometimes.
        answers = draw(st.sampled_from([*calls[-2:] * 3, "nobody"]))
        content = draw(
            st.one_of(
                text, st.lists(st.builds(lambda t: {"type": "text", "text": t}, text), max_size=2)
            )
        )
        return {
            "type": "tool_result",
            "tool_use_id": answers,
            "content": content,
            "is_error": draw(st.booleans()),
        }
    if kind == "thinking":
        return {"type": "thinking", "thinking": draw(text), "signature": draw(_words)}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": draw(_words)}
    if kind == "image":
        source = draw(
            st.sampled_from(
                [
                    {"type": "url", "url": "https://example.com/a.png"},
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                ]
            )
        )
        return {"type": "image", "source": source}
    if kind == "document":
        source = draw(
            st.sampled_from(
                [
                    {"type": "text", "media_type": "text/plain", "data": "notes"},
                    {"type": "content", "content": [{"type": "text", "text": "part"}]},
                    {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
                    {"type": "url", "url": "https://example.com/a.pdf"},
                ]
            )
            | st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "content", "base64"])},
                optional={"data": _odd, "content": _odd, "media_type": _odd},
            )
        )
        return {"type": "document", "source": source, "title": draw(st.none() | _words)}
    return {"type": "server_tool_use", "id": f"srv{len(calls)}", "name": "web_search", "input": {}}


@st.composite
def _messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls: list[str] = []
    roles = draw(
        st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=10)
        # Mostly turns that alternate from the user's (what a session is), sometimes any.
        | st.integers(1, 10).map(lambda n: ["user", "assistant"] * n)
    )
    out = []
    for role in roles:
        blocks = draw(st.lists(_block(role, calls), min_size=0, max_size=3))
        out.append(
            {"role": role, "content": blocks if blocks or draw(st.booleans()) else draw(text)}
        )
    return out


@st.composite
def _compaction(draw: st.DrawFn, length: int, replies: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": draw(_or_odd(st.sampled_from(["compact", "microcompact"]))),
        "trigger": draw(_or_odd(st.sampled_from(["auto", "manual"]))),
        "replies_before": draw(_or_odd(st.integers(0, replies + 1))),
        "summary_index": draw(_index(length)),
        "summary_block": draw(_or_odd(st.integers(0, 3))),
        "pre_tokens": draw(_or_odd(_tokens)),
    }
    if record["kind"] == "microcompact":
        record["tool_ids"] = draw(
            _or_odd(st.lists(st.sampled_from(["t0", "t1", "nobody"]), max_size=3))
        )
        record["tokens_saved"] = draw(_or_odd(st.integers(0, 10**5)))
    drop = draw(st.lists(st.sampled_from(sorted(record)), max_size=2))
    return {k: v for k, v in record.items() if k not in drop}


@st.composite
def _meta(draw: st.DrawFn, messages: list[dict[str, Any]]) -> dict[str, Any]:
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    usage = {
        str(i): draw(_or_odd(st.lists(_tokens, min_size=4, max_size=4)))
        for i in draw(
            st.lists(st.sampled_from(replies or [0]) | st.integers(-1, len(messages)), max_size=4)
        )
    }
    model = st.sampled_from(["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "", "no-such-model"])
    meta: dict[str, Any] = {
        "type": "meta",
        "system": draw(_or_odd(text)),
        "tools": draw(
            _or_odd(
                st.lists(st.fixed_dictionaries({"name": _words, "description": text}), max_size=2)
            )
        ),
        "usage": draw(_or_odd(st.just(usage))),
        "source": draw(_or_odd(st.sampled_from(["claude_code", "codex", "gemini_cli", "ctxlab"]))),
        "models": draw(_or_odd(st.lists(model, max_size=2))),
        "reply_models": draw(
            _or_odd(st.dictionaries(st.integers(0, 5).map(str), model, max_size=3))
        ),
        "compactions": draw(
            _or_odd(st.lists(_compaction(len(messages), len(replies)), max_size=3))
        ),
        "unrecorded_prompts": draw(_or_odd(st.booleans())),
    }
    # Each key kept or left out: a file may hold any of them.
    keep = draw(st.sets(st.sampled_from(sorted(meta)), min_size=len(meta) - 3))
    return {k: v for k, v in meta.items() if k in keep or k == "type"}


@st.composite
def ctxlab_sessions(draw: st.DrawFn) -> bytes:
    """The bytes of a generated session file in ctxlab's format (see the module)."""
    messages = draw(_messages())
    meta = draw(_meta(messages))
    lines = [json.dumps(meta), *(json.dumps(m) for m in messages)]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


_EVENTS = ("prompt", "reply", "reply", "results", "boundary", "summary", "micro", "side", "other")
"""What a Claude Code session's lines record, one drawn per line (replies twice as often)."""

_OPENINGS: tuple[list[str], ...] = (
    [],
    [],
    [],
    ["reply"],
    ["boundary", "reply"],
    ["reply", "micro"],
)
_OPENINGS += (["boundary"], ["reply", "boundary", "reply"])
"""How a session's lines begin: with a prompt, mostly; as a continued session, often."""


@st.composite
def _claude_line(draw: st.DrawFn, event: str, number: int, state: dict[str, Any]) -> Any:
    line: dict[str, Any] = {
        "parentUuid": f"u{number - 1}" if number else None,
        "isSidechain": event == "side",
        "userType": "external",
        "sessionId": "s1",
        "version": "2.0.1",
        "uuid": f"u{number}",
        "timestamp": f"2025-10-01T00:{number // 60:02d}:{number % 60:02d}Z",
    }
    calls: list[str] = state["calls"]
    if event in ("boundary", "micro"):
        kind = "compact" if event == "boundary" else "microcompact"
        data: dict[str, Any] = {"trigger": draw(_or_odd(st.sampled_from(["auto", "manual"])))}
        data["preTokens"] = draw(_or_odd(_tokens))
        if event == "micro":
            data["compactedToolIds"] = draw(_or_odd(st.lists(st.sampled_from([*calls, "x"]))))
            data["tokensSaved"] = draw(_or_odd(_tokens))
        return {**line, "type": "system", "subtype": f"{kind}_boundary", f"{kind}Metadata": data}
    if event == "other":
        return {**line, "type": draw(st.sampled_from(["progress", "file-history-snapshot"]))}
    if event in ("reply", "side"):
        # A new response, or another line of the last one (Claude Code writes one a block).
        if draw(st.integers(0, 2)) or not state["reply"]:
            state["reply"] = f"msg_{number}"
        usage = {k: draw(_or_odd(_tokens)) for k in ("input_tokens", "output_tokens")}
        usage["cache_read_input_tokens"] = draw(_or_odd(_tokens))
        message = {
            "id": state["reply"],
            "role": "assistant",
            "model": draw(_or_odd(st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-1"]))),
            "content": [draw(_block("assistant", calls))],
            "usage": usage,
        }
        return {
            **line,
            "type": "assistant",
            "requestId": f"req_{state['reply']}",
            "message": message,
        }
    if event == "results":
        content: Any = [
            {"type": "tool_result", "tool_use_id": call, "content": draw(text)}
            for call in draw(st.lists(st.sampled_from([*calls[-3:], "x"]), max_size=3))
        ]
    elif event == "summary":
        content = "This session is being continued from a previous conversation. " + draw(text)
    else:
        content = draw(st.lists(_block("user", calls), max_size=3) | text)
    if event != "results" and draw(st.integers(0, 3)) == 0:
        # Thinking in a user line, as a rewind or a compaction may leave it.
        thinking = {"type": "thinking", "thinking": draw(text), "signature": "s"}
        content = [thinking, *(content if isinstance(content, list) else [content])]
    extra = {"isCompactSummary": True} if event == "summary" else {}
    return {**line, **extra, "type": "user", "message": {"role": "user", "content": content}}


@st.composite
def claude_code_sessions(draw: st.DrawFn) -> bytes:
    """The bytes of a generated Claude Code session (JSON Lines as Claude Code writes them):
    prompts, replies written a block a line, tool results, compaction and microcompaction
    boundaries with or without their summary, sidechain and other lines, thinking in user
    lines, in any order — a session that may open with a reply or a boundary."""
    # A session continued after a compaction opens with its boundary, a reply, or both: drawn
    # as an opening often, since the lines drawn one by one would seldom begin so.
    opening = draw(st.sampled_from(_OPENINGS))
    events = opening + draw(st.lists(st.sampled_from(_EVENTS), min_size=1, max_size=16))
    state: dict[str, Any] = {"calls": [], "reply": None}
    lines = [draw(_claude_line(event, n, state)) for n, event in enumerate(events)]
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode("utf-8", "surrogatepass")
