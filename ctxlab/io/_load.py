"""`load`: a session recorded by ctxlab or another tool, as a `Transcript` — the format detected
from the content (or forced with ``format=``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._aider import from_aider, is_aider_history
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._chat import (
    from_anthropic,
    from_openai,
    from_openai_responses,
    is_openai,
    is_openai_responses,
    tool_schemas,
)
from ctxlab.io._claude_code import from_claude_code, is_claude_code_line, subagent_records
from ctxlab.io._codex import from_codex, is_codex_line
from ctxlab.io._compactions import place_compactions
from ctxlab.io._frameworks import (
    as_plain_data,
    from_langchain,
    from_pydantic_ai,
    is_langchain,
    is_pydantic_ai,
)
from ctxlab.io._gemini import (
    from_gemini_cli,
    from_gemini_contents,
    is_gemini_cli,
    is_gemini_contents,
)
from ctxlab.io._mini_swe_agent import from_mini_swe_agent, is_mini_swe_agent_list
from ctxlab.io._otel import from_otel, is_otel
from ctxlab.io._swe_agent import from_swe_agent, is_swe_agent
from ctxlab.io._transcript import Transcript, load_transcript
from ctxlab.messages._request import ToolSchema
from ctxlab.util._jsonl import json_lines, read_text

__all__ = ["FORMATS", "Format", "detect_format", "load"]

Format = Literal[
    "ctxlab",
    "claude_code",
    "anthropic",
    "openai",
    "openai_responses",
    "langchain",
    "pydantic_ai",
    "mini_swe_agent",
    "swe_agent",
    "openhands",
    "tau_bench",
    "otel",
    "gemini_cli",
    "gemini",
    "codex",
    "aider",
]
FORMATS: tuple[Format, ...] = get_args(Format)


def _records(path: Path) -> tuple[list[tuple[int, Any]], Any]:
    """(line number, value) of a JSON Lines file, or the whole JSON document."""
    text = read_text(path)
    try:
        return [], json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        records = json_lines(path, text)
    except MessageFormatError:
        # Pretty-printed JSON objects one after another (the OpenTelemetry console exporter).
        concatenated = _concatenated(text)
        if concatenated is None:
            raise
        records = concatenated
    if not records:
        msg = f"{path} is empty"
        raise MessageFormatError(msg)
    return records, None


def _concatenated(text: str) -> list[tuple[int, Any]] | None:
    decoder = json.JSONDecoder()
    records: list[tuple[int, Any]] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        try:
            value, end = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            return None
        records.append((text.count("\n", 0, position) + 1, value))
        position = end
    return records if len(records) > 1 else None


def detect_format(value: Any) -> Format:
    """The format of a decoded document or of the first record of a JSON Lines file."""
    if is_otel(value):
        return "otel"
    if isinstance(value, Mapping):
        if value.get("type") == "meta":
            return "ctxlab"
        if is_claude_code_line(value):
            return "claude_code"
        if is_gemini_cli(value):
            return "gemini_cli"
        if is_codex_line(value):
            return "codex"
        if "trajectory_format" in value and "messages" in value:
            return "mini_swe_agent"
        if is_swe_agent(value):
            return "swe_agent"
        if isinstance(value.get("fncall_messages"), list):
            return "openhands"
        if "messages" in value and isinstance(value["messages"], list):
            return "openai" if is_openai(value["messages"]) else "anthropic"
        if "role" in value:
            return "openai" if is_openai([value]) else "anthropic"
    if isinstance(value, list) and value:
        found = _list_format(value)
        if found is not None:
            return found
    msg = f"cannot tell the format of this session; pass format= one of {', '.join(FORMATS)}"
    raise MessageFormatError(msg)


def _list_format(value: list[Any]) -> Format | None:
    if all(isinstance(v, Mapping) and "traj" in v for v in value[:3]):
        return "tau_bench"
    if is_codex_line(value[0]):
        return "codex"
    if is_pydantic_ai(value):
        return "pydantic_ai"
    if is_gemini_contents(value):
        return "gemini"
    if is_openai_responses(value):
        return "openai_responses"
    if is_langchain(value):
        return "langchain"
    if is_mini_swe_agent_list(value):
        return "mini_swe_agent"
    if all(isinstance(v, Mapping) and "role" in v for v in value[:50]):
        return "openai" if is_openai(value) else "anthropic"
    return None


def load(
    source: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any],
    *,
    format: Format | None = None,
    episode: int = 0,
    sidechains: bool = False,
    name: str | None = None,
) -> Transcript:
    """A recorded session as a `Transcript`, from a file or from decoded data.

    Formats: ctxlab's JSONL, Claude Code session JSONL, Anthropic Messages (a list, a request
    dict with ``system``/``messages``/``tools``, or JSONL), OpenAI Chat Completions messages,
    mini-SWE-agent ``traj.json``, SWE-agent ``.traj`` (both history formats), OpenHands
    completion logs, tau-bench result files (``episode`` picks one), LangChain message dicts,
    pydantic-ai message JSON, OpenTelemetry trace exports (GenAI semantic conventions or
    OpenInference; ``episode`` picks a conversation), Gemini CLI sessions (``session-*.jsonl``
    or ``.json``), Gemini API contents, Codex CLI rollouts (``rollout-*.jsonl``) and aider's
    ``.aider.chat.history.md`` (``episode`` picks a run). What a file holds that is not a message (a CLI's
    info lines, thought summaries) is counted in ``meta["skipped"]``. The
    conversation is repaired where it must be (every tool call answered, ids unique) and
    ``meta`` says what was inferred, dropped or repaired. Raises `MessageFormatError` naming the
    file, the line or message, and what is wrong.
    """
    try:
        return _load(source, format, episode, sidechains, name)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        if isinstance(exc, MessageFormatError):
            raise
        # A record of an unexpected shape deep inside: said as a format error, not a crash.
        where = str(source) if isinstance(source, str | os.PathLike) else "the data"
        msg = (
            f"{where} does not read as a {format or 'recognized'} session: "
            f"{type(exc).__name__}: {exc}"
        )
        raise MessageFormatError(msg) from exc


def _load(
    source: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any],
    format: Format | None,
    episode: int,
    sidechains: bool,
    name: str | None,
) -> Transcript:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if format == "aider" or (format is None and _starts_as_aider(path)):
            builder, notes = from_aider(read_text(path), str(path), episode)
            meta = {"source": "aider", **notes}
            # Named for the folder it is in: aider keeps one history per repository.
            return _transcript(
                name or path.resolve().parent.name or "aider",
                builder,
                meta,
                "",
                (),
            )
        records, document = _records(path)
        label, stem = str(path), path.name.split(".")[0]
        first = document if records == [] else records[0][1]
        kind = format or detect_format(first)
        if kind == "ctxlab":
            return load_transcript(path)
        if kind == "claude_code":
            return _claude_code(
                records or [(1, document)], label, name or stem, episode, sidechains
            )
        data: Any = document if records == [] else [value for _, value in records]
    else:
        data = as_plain_data(source) if isinstance(source, list | tuple) else source
        label, stem = "<data>", "session"
        kind = format or detect_format(data)
    return _from_data(data, kind, label, name or stem, episode)


def _starts_as_aider(path: Path) -> bool:
    # A Markdown chat history, not JSON: known from its first bytes.
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return False
    return is_aider_history(head.decode("utf-8", "replace"))


def _claude_code(
    records: list[tuple[int, Any]], where: str, name: str, episode: int, sidechains: bool
) -> Transcript:
    # Episode 0 is the main thread; episode N the N-th subagent (in order of first line).
    if sidechains:  # the former splice of every subagent into the main thread
        builder, meta = from_claude_code(records, where, sidechains=True)
        return _transcript(name, builder, meta, "", ())
    main, agents = subagent_records(records)
    listed: list[dict[str, Any]] = [
        {"episode": n, "task_call_id": key, "lines": len(lines)}
        for n, (key, lines) in enumerate(agents.items(), 1)
    ]
    if episode:
        if not 0 < episode <= len(listed):
            msg = (
                f"{where}: no subagent {episode} (the session has {len(listed)}; episode 0 is "
                "the main thread)"
            )
            raise MessageFormatError(msg)
        key = listed[episode - 1]["task_call_id"]
        builder, meta = from_claude_code(agents[key], f"{where} subagent {episode}")
        meta.update(subagent_of=key)
        return _transcript(f"{name}#{episode}", builder, meta, "", ())
    builder, meta = from_claude_code(main, where)
    if listed:
        meta["subagents"] = listed
        builder.skip("subagent line", sum(item["lines"] for item in listed))
    return _transcript(name, builder, meta, "", ())


def _from_data(data: Any, kind: Format, where: str, name: str, episode: int) -> Transcript:
    meta: dict[str, Any] = {"source": kind}
    document = _DOCUMENTS.get(kind)
    if document is not None:
        return document(data, where, name, episode, meta)
    return _messages(data, kind, where, name, meta)


def _tau_bench(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list) or not 0 <= episode < len(data):
        held = len(data) if isinstance(data, list) else 0
        msg = f"{where}: no episode {episode} (the file holds {held})"
        raise MessageFormatError(msg)
    record = data[episode]
    meta.update({k: record.get(k) for k in ("task_id", "trial", "reward")})
    traj = record.get("traj") if isinstance(record, Mapping) else None
    if not isinstance(traj, list):
        msg = f"{where} episode {episode}: 'traj' must be a list of messages"
        raise MessageFormatError(msg)
    if not traj:
        info = record.get("info") if isinstance(record.get("info"), Mapping) else {}
        why = info.get("error") or info.get("traceback") or "no reason recorded"
        msg = (
            f"{where} episode {episode} (task {record.get('task_id')!r}) recorded no messages: "
            f"the episode errored ({str(why)[:200]}); pick another with episode="
        )
        raise MessageFormatError(msg)
    builder, system = from_openai(traj, f"{where} episode {episode}")
    return _transcript(name, builder, meta, system, ())


def _otel(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, system, tools, notes = from_otel(data, where, episode)
    return _transcript(name, builder, {**meta, **notes}, system, tools)


def _gemini_cli(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, notes = from_gemini_cli(data if isinstance(data, list) else [data], where)
    return _transcript(name, builder, {**meta, **notes}, "", ())


def _gemini(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list):
        msg = f"{where}: Gemini contents are a list of {{role, parts}} objects"
        raise MessageFormatError(msg)
    return _transcript(name, from_gemini_contents(data, where), meta, "", ())


def _codex(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, system, notes = from_codex(enumerate(lines, 1), where)
    return _transcript(name, builder, {**meta, **notes}, system, ())


def _swe_agent(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a SWE-agent trajectory is a JSON object"
        raise MessageFormatError(msg)
    builder, system = from_swe_agent(data, where)
    return _transcript(name, builder, meta, system, ())


def _mini_swe_agent(
    data: Any, where: str, name: str, episode: int, meta: dict[str, Any]
) -> Transcript:
    builder, system, notes = from_mini_swe_agent(data, where)
    return _transcript(name, builder, {**meta, **notes}, system, ())


def _messages(data: Any, kind: Format, where: str, name: str, meta: dict[str, Any]) -> Transcript:
    # The formats that are a list of messages, or a request holding one.
    tools: tuple[ToolSchema, ...] = ()
    system = ""
    messages = data
    if isinstance(data, Mapping):
        messages = data.get("messages", [data])
        system = _system(data.get("system"))
        tools = tool_schemas(data.get("tools"), where)
    if not isinstance(messages, list):
        msg = f"{where}: expected a list of messages"
        raise MessageFormatError(msg)
    if kind in ("openai", "openai_responses", "langchain", "pydantic_ai"):
        read = {
            "openai": from_openai,
            "openai_responses": from_openai_responses,
            "langchain": from_langchain,
            "pydantic_ai": from_pydantic_ai,
        }
        builder, found = read[kind](messages, where)
        system = "\n\n".join(s for s in (system, found) if s)
    elif kind == "anthropic":
        builder = from_anthropic(messages, where)
    else:
        msg = f"{where}: format {kind!r} needs a file path"
        raise MessageFormatError(msg)
    return _transcript(name, builder, meta, system, tools)


def _openhands(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # One OpenHands completion log is one LLM call: the messages it sent (with function calls,
    # ``fncall_messages``) and its answer (``fncall_response``); the last log of a run holds
    # the whole conversation.
    if not isinstance(data, Mapping) or not isinstance(data.get("fncall_messages"), list):
        msg = f"{where}: an OpenHands completion log needs a 'fncall_messages' list"
        raise MessageFormatError(msg)
    messages = list(data["fncall_messages"])
    response = data.get("fncall_response")
    if isinstance(response, Mapping) and isinstance(response.get("choices"), list):
        choice = response["choices"][0] if response["choices"] else {}
        if isinstance(choice, Mapping) and isinstance(choice.get("message"), Mapping):
            messages.append({**choice["message"], "usage": response.get("usage")})
    builder, system = from_openai(messages, where)
    tools = tool_schemas(data.get("tools") or (data.get("kwargs") or {}).get("tools"), where)
    return _transcript(name, builder, meta, system, tools)


def _system(value: Any) -> str:
    if isinstance(value, list):
        return "\n\n".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping))
    return value if isinstance(value, str) else ""


def _transcript(
    name: str,
    builder: ConversationBuilder,
    meta: dict[str, Any],
    system: str,
    tools: tuple[ToolSchema, ...],
) -> Transcript:
    messages, notes, usage = builder.finish()
    if not messages:
        msg = f"{builder.where}: no messages"
        raise MessageFormatError(msg)
    place_compactions(meta, messages)
    return Transcript(
        name=name,
        meta={**meta, **notes},
        system=system,
        messages=tuple(messages),
        tools=tools,
        usage=usage,
    )


_DOCUMENTS: dict[str, Callable[[Any, str, str, int, dict[str, Any]], Transcript]] = {
    "tau_bench": _tau_bench,
    "otel": _otel,
    "gemini_cli": _gemini_cli,
    "gemini": _gemini,
    "codex": _codex,
    "swe_agent": _swe_agent,
    "openhands": _openhands,
    "mini_swe_agent": _mini_swe_agent,
}
"""The formats read as a whole document (one reader each), not as a list of messages."""
