"""The independent census of `real_files.py`: what a session file holds, read by a small parser
per format written from the tools' own file layouts — never by ctxlab's readers, whose work it
checks (DESIGN.md: "measure apart from what is measured").

Each parser returns one `Holdings` per conversation the file holds (an Inspect log's samples,
an aider history's runs; one for most formats): messages and replies, tool calls, the billed
requests (each usage report once, deduplicated as the format requires: Claude Code repeats a
reply's usage on each line of it, Codex repeats a ``token_count`` when only its rate limits
change), reasoning texts, the models, and what the parser met but could not place
(``unaccounted``: its own loss, shown, never dropped).
"""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PARSERS", "Holdings", "census_of", "provider_of"]


@dataclass
class Holdings:
    """What one conversation of a file holds, counted from the raw file."""

    messages: int = 0
    """User and model messages (not tool results, not metadata)."""
    replies: int = 0
    """Model replies (a reply split over several records counted once)."""
    tool_calls: int = 0
    """Tool or function calls the model made."""
    reasoning: int = 0
    """Reasoning texts (thinking blocks, reasoning items, thoughts), empty ones not counted."""
    bills: list[int] = field(default_factory=list)
    """Billed input tokens of each billed request (input + cache reads + cache writes), in
    order; one entry per usage report after deduplication."""
    outputs: int = 0
    """Usage reports that carry only output tokens (Copilot's per-message ``outputTokens``)."""
    zero_bills: int = 0
    """Usage reports whose every count is zero (a tool wrote them unfilled)."""
    models: Counter[str] = field(default_factory=Counter)
    """Model names, by how many replies name them."""
    unaccounted: Counter[str] = field(default_factory=Counter)
    """Records this census met and could not classify, by kind."""

    @property
    def usage_reports(self) -> int:
        """Usage reports of any kind: billed requests and output-only reports."""
        return len(self.bills) + self.outputs + self.zero_bills


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """The JSON records of a JSON Lines file with their line numbers; a line that is not JSON
    is yielded as None (the caller counts it)."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError:
                yield number, None


def _text(value: Any) -> str:
    """The text of a content value: a string, or the text parts of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text(v.get("text") if isinstance(v, Mapping) else v) for v in value)
    return ""


_KEYS = (
    ("usage", re.compile(r"tokens|usage", re.IGNORECASE)),
    ("tool calls", re.compile(r"tool_?(use|call|request)s?$|function_call", re.IGNORECASE)),
    ("reasoning", re.compile(r"reasoning|thinking|thought", re.IGNORECASE)),
)


def _unknown(held: Holdings, kind: str, record: Any) -> None:
    """Count a record this census does not classify, saying what it holds (a field named for
    tokens, tool calls or reasoning anywhere in it): an unknown record with usage in it is a
    likelier loss than an unknown status line."""
    found = sorted({name for name, key in _KEYS for k in _keys(record) if key.search(k)})
    held.unaccounted[kind + (f" (holds {', '.join(found)})" if found else "")] += 1


def _keys(value: Any, depth: int = 0) -> Iterator[str]:
    if depth > 8:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item, depth + 1)
    elif isinstance(value, list):
        for item in value[:50]:
            yield from _keys(item, depth + 1)


# --- Claude Code ---------------------------------------------------------------------------

_CLAUDE_META = {
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "last-prompt",
    "attachment",
    "permission-mode",
    "mode",
    "custom-title",
    "agent-name",
    "tag",
    "pr-link",
}


def claude_code(path: Path) -> list[Holdings]:
    """``~/.claude/projects/<project>/<session>.jsonl``: one record a line; a reply's blocks
    come one a line, each line repeating the reply's ``message.id`` and usage."""
    held = Holdings()
    replies: dict[str, Mapping[str, Any]] = {}
    calls: set[str] = set()
    for number, record in _lines(path):
        if not isinstance(record, Mapping):
            held.unaccounted[f"line {number} not JSON"] += 1
            continue
        kind = record.get("type")
        if record.get("isSidechain") and kind in ("user", "assistant"):
            continue  # a subagent's line, read with its own file
        message = record.get("message")
        if kind == "user" and isinstance(message, Mapping):
            content = message.get("content")
            parts = content if isinstance(content, list) else [content]
            if any(not (isinstance(p, Mapping) and p.get("type") == "tool_result") for p in parts):
                held.messages += 1
        elif kind == "assistant" and isinstance(message, Mapping):
            # One reply's lines share its id (and request id, and model)
            key = "/".join(
                str(x)
                for x in (
                    message.get("id") or record.get("uuid"),
                    record.get("requestId"),
                    message.get("model"),
                )
            )
            replies.setdefault(key, message)
            for block in message.get("content") or []:
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") in ("tool_use", "server_tool_use"):
                    calls.add(str(block.get("id") or f"{key}/{len(calls)}"))
                elif (block.get("type") == "thinking" and block.get("thinking")) or block.get(
                    "type"
                ) == "redacted_thinking":
                    held.reasoning += 1
        elif kind not in _CLAUDE_META:
            _unknown(held, str(kind), record)
    for message in replies.values():
        model = message.get("model")
        if model == "<synthetic>":
            continue
        held.replies += 1
        held.messages += 1
        held.models[str(model)] += 1
        _anthropic_bill(held, message.get("usage"))
    held.tool_calls = len(calls)
    return [held]


def _anthropic_bill(held: Holdings, usage: Any) -> None:
    if not isinstance(usage, Mapping) or not usage:
        return
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    billed = sum(_int(usage.get(k)) for k in keys)
    if billed == 0 and _int(usage.get("output_tokens")) == 0:
        held.zero_bills += 1
    else:
        held.bills.append(billed)


# --- Codex CLI rollouts --------------------------------------------------------------------

_CODEX_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_CODEX_ITEMS = {
    "function_call_output",
    "custom_tool_call_output",
    "ghost_snapshot",
    "compaction",
    "other",
}


def codex(path: Path) -> list[Holdings]:
    """``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``: ``session_meta``, ``turn_context``
    (the model), ``response_item`` (what was sent and received: messages, reasoning, calls),
    ``event_msg`` (``token_count``: the latest request's usage, repeated when only the rate
    limits change) and ``compacted``."""
    held = Holdings()
    model = None
    last_total: Any = None
    for number, record in _lines(path):
        if not isinstance(record, Mapping):
            held.unaccounted[f"line {number} not JSON"] += 1
            continue
        kind, payload = record.get("type"), record.get("payload")
        payload = payload if isinstance(payload, Mapping) else {}
        if kind == "turn_context":
            model = payload.get("model") or model
        elif kind == "response_item":
            _codex_item(held, payload)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if not isinstance(info, Mapping):
                continue  # rate limits only: no request
            total = info.get("total_token_usage")
            if total is not None and total == last_total:
                continue  # the same request's usage again
            last_total = total
            last = info.get("last_token_usage") or {}
            held.bills.append(_int(last.get("input_tokens")))
            held.models[str(model)] += 1
        elif kind not in ("session_meta", "event_msg", "compacted", "world_state"):
            _unknown(held, str(kind), record)
    return [held]


def _codex_item(held: Holdings, item: Mapping[str, Any]) -> None:
    kind = item.get("type")
    if kind == "message":
        if item.get("role") == "assistant":
            held.replies += 1
            held.messages += 1
        elif item.get("role") == "user":
            held.messages += 1
    elif kind == "reasoning":
        summary = item.get("summary") or []
        content = item.get("content") or []
        if _text(summary) or _text(content) or item.get("encrypted_content"):
            held.reasoning += 1
    elif kind in _CODEX_CALLS or str(kind).endswith("_call"):
        held.tool_calls += 1
    elif kind not in _CODEX_ITEMS and not str(kind).endswith(("_output", "_result")):
        _unknown(held, f"response_item {kind}", item)


# --- Gemini CLI ----------------------------------------------------------------------------


def gemini_cli(path: Path) -> list[Holdings]:
    """``~/.gemini/tmp/<project>/chats/session-*.json`` (one document: ``messages``) or
    ``session-*.jsonl`` (a metadata line, then message records — a record whose ``id`` was seen
    replaces it — ``$set`` updates and ``$rewindTo`` cuts)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data.get("messages") if isinstance(data, Mapping) else None
        return [_gemini_messages(records if isinstance(records, list) else [])]
    order: dict[str, Mapping[str, Any]] = {}
    held = Holdings()
    for number, record in _lines(path):
        if not isinstance(record, Mapping):
            held.unaccounted[f"line {number} not JSON"] += 1
        elif "$rewindTo" in record:
            cut = record["$rewindTo"]
            keys = list(order)
            if cut in order:
                for key in keys[keys.index(cut) :]:
                    del order[key]
        elif "$set" in record or ("sessionId" in record and "type" not in record):
            continue
        elif "id" in record and "type" in record:
            order[str(record["id"])] = record
        else:
            held.unaccounted["record without id and type"] += 1
    counted = _gemini_messages(list(order.values()))
    counted.unaccounted.update(held.unaccounted)
    return [counted]


def _gemini_messages(records: list[Any]) -> Holdings:
    held = Holdings()
    for message in records:
        if not isinstance(message, Mapping):
            held.unaccounted["message not an object"] += 1
            continue
        kind = message.get("type")
        if kind == "user":
            held.messages += 1
        elif kind == "gemini":
            held.messages += 1
            held.replies += 1
            held.models[str(message.get("model"))] += 1
            held.tool_calls += len(message.get("toolCalls") or [])
            held.reasoning += sum(
                1
                for t in message.get("thoughts") or []
                if isinstance(t, Mapping) and (t.get("description") or t.get("subject"))
            )
            tokens = message.get("tokens")
            if isinstance(tokens, Mapping):
                if not any(_int(v) for v in tokens.values()):
                    held.zero_bills += 1
                else:
                    held.bills.append(_int(tokens.get("input")))
        elif kind not in ("info", "error", "warning"):
            _unknown(held, f"message type {kind}", message)
    return held


# --- GitHub Copilot CLI --------------------------------------------------------------------


_COPILOT_QUIET = ("session", "tool", "hook", "system", "subagent", "abort")
_COPILOT_TURNS = ("assistant.turn_start", "assistant.turn_end", "assistant.intent")


def copilot(path: Path) -> list[Holdings]:
    """``~/.copilot/session-state/<id>/events.jsonl``: one event a line (``user.message``,
    ``assistant.message`` with its ``toolRequests``, ``outputTokens`` and ``reasoningText``,
    ``assistant.reasoning``, ``assistant.usage`` with the request's input, ``tool.*``,
    ``session.*``)."""
    held = Holdings()
    for number, record in _lines(path):
        if not isinstance(record, Mapping):
            held.unaccounted[f"line {number} not JSON"] += 1
            continue
        kind, data = str(record.get("type")), record.get("data")
        data = data if isinstance(data, Mapping) else {}
        if kind == "user.message":
            held.messages += 1
        elif kind == "assistant.message":
            held.messages += 1
            held.replies += 1
            held.tool_calls += len(data.get("toolRequests") or [])
            if data.get("reasoningText"):
                held.reasoning += 1
            if "outputTokens" in data and data.get("outputTokens") is not None:
                held.outputs += 1
            if data.get("model"):
                held.models[str(data["model"])] += 1
        elif kind == "assistant.reasoning":
            held.reasoning += bool(data.get("content"))
        elif kind == "assistant.usage":
            keys = ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
            held.bills.append(sum(_int(data.get(k)) for k in keys))
        elif kind.split(".")[0] not in _COPILOT_QUIET and kind not in _COPILOT_TURNS:
            _unknown(held, kind, record)
    return [held]


# --- OpenAI chat lists (mini-SWE-agent, OpenHands completion logs) -------------------------


def _chat(held: Holdings, messages: list[Any], *, fenced: bool = False) -> None:
    for message in messages:
        if not isinstance(message, Mapping):
            held.unaccounted["message not an object"] += 1
            continue
        role = message.get("role")
        if role == "assistant":
            held.messages += 1
            held.replies += 1
            calls = message.get("tool_calls") or []
            held.tool_calls += len(calls)
            if fenced and not calls:
                held.tool_calls += len(_FENCE.findall(_text(message.get("content"))))
            if message.get("reasoning_content") or message.get("thinking_blocks"):
                held.reasoning += 1
        elif role == "user":
            held.messages += 1
        elif role not in ("system", "tool", "developer", "exit"):
            held.unaccounted[f"role {role}"] += 1


_FENCE = re.compile(r"```(?:mswea_bash_command|bash)\n")


def _chat_bill(held: Holdings, usage: Any) -> None:
    """An OpenAI-style usage: ``prompt_tokens`` is the whole input (cached tokens included;
    litellm's Anthropic mapping adds the cache writes and reads to it too) — unless it is
    smaller than the cache figures beside it, when they were left out of it."""
    if not isinstance(usage, Mapping):
        return
    prompt = _int(usage.get("prompt_tokens"))
    cached = _int(usage.get("cache_creation_input_tokens")) + _int(
        usage.get("cache_read_input_tokens")
    )
    if prompt == 0 and _int(usage.get("completion_tokens")) == 0:
        held.zero_bills += 1
    else:
        held.bills.append(prompt if prompt >= cached else prompt + cached)


def mini_swe_agent(path: Path) -> list[Holdings]:
    """mini-SWE-agent's ``*.traj.json``: ``{"messages": [...], "info": ...}`` or a bare list;
    an assistant message's ``extra.response`` is the provider's answer with its usage; a
    text-based run's action is the one fenced command of each reply."""
    data = json.loads(path.read_text(encoding="utf-8"))
    messages = data.get("messages") if isinstance(data, Mapping) else data
    messages = messages if isinstance(messages, list) else []
    held = Holdings()
    _chat(held, messages, fenced=True)
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            response = (message.get("extra") or {}).get("response") or {}
            if isinstance(response, Mapping) and response.get("usage"):
                _chat_bill(held, response.get("usage"))
                held.models[str(response.get("model"))] += 1
    return [held]


def openhands_log(path: Path) -> list[Holdings]:
    """An OpenHands completion log (one request: V0 ``messages``/``response`` with, when
    function calling was mocked, ``fncall_messages``/``fncall_response``; the V1 SDK's
    ``messages``/``raw_messages``/``response``/``raw_response``): the conversation in the
    form that carries the tool calls, and the one response."""
    data = json.loads(path.read_text(encoding="utf-8"))
    forms = [data.get(k) for k in ("fncall_messages", "raw_messages", "messages")]
    lists = [f for f in forms if isinstance(f, list)]
    messages = max(
        lists,
        key=lambda m: sum(len(x.get("tool_calls") or []) for x in m if isinstance(x, Mapping)),
        default=[],
    )
    held = Holdings()
    _chat(held, messages)
    responses = [data.get(k) for k in ("fncall_response", "response", "raw_response")]
    responses = [r for r in responses if isinstance(r, Mapping) and r.get("choices")]
    best = max(responses, key=lambda r: len(_choice(r).get("tool_calls") or []), default=None)
    if best is not None:
        _chat(held, [_choice(best)])
        _chat_bill(held, next((r.get("usage") for r in responses if r.get("usage")), None))
        held.models[str(best.get("model"))] += 1
    return [held]


def _choice(response: Mapping[str, Any]) -> Mapping[str, Any]:
    choice = (response.get("choices") or [{}])[0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    return message if isinstance(message, Mapping) else {}


def openhands_events(path: Path) -> list[Holdings]:
    """An OpenHands V0 trajectory (a list of events; or ``{"history": [...]}``): the user's
    ``message`` actions, the agent's actions — a function call carries ``tool_call_metadata``
    with the ``model_response`` (and its usage) of the reply that made it, shared by the calls
    of one reply."""
    if path.suffix == ".jsonl":  # an evaluation's output: one instance (its history) a line
        return [
            _openhands_history(record.get("history") if isinstance(record, Mapping) else None)
            for _, record in _lines(path)
        ]
    data = json.loads(path.read_text(encoding="utf-8"))
    return [_openhands_history(data.get("history") if isinstance(data, Mapping) else data)]


def _openhands_history(events: Any) -> Holdings:
    held = Holdings()
    responses: dict[str, Mapping[str, Any]] = {}
    calls: set[str] = set()
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, Mapping):
            held.unaccounted["event not an object"] += 1
            continue
        meta = event.get("tool_call_metadata")
        if event.get("source") == "user" and event.get("action") == "message":
            held.messages += 1
        elif isinstance(meta, Mapping) and "action" in event:
            calls.add(str(meta.get("tool_call_id")))
            response = meta.get("model_response")
            if isinstance(response, Mapping):
                responses.setdefault(str(response.get("id")), response)
        elif event.get("source") == "agent" and event.get("action") in ("message", "finish"):
            held.messages += 1
            held.replies += 1
    for response in responses.values():
        held.replies += 1
        held.messages += 1
        held.models[str(response.get("model"))] += 1
        _chat_bill(held, response.get("usage"))
        if _choice(response).get("reasoning_content"):
            held.reasoning += 1
    held.tool_calls = len(calls)
    return held


def openhands(path: Path) -> list[Holdings]:
    """Dispatch: a V1 conversation folder, a completion log, or an event history."""
    if path.is_dir():
        return openhands_v1(path)
    if path.suffix == ".jsonl":
        return openhands_events(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, Mapping) and ("response" in data or "fncall_response" in data):
        return openhands_log(path)
    return openhands_events(path)


def openhands_v1(path: Path) -> list[Holdings]:
    """An OpenHands V1 conversation folder: ``base_state.json`` and ``events/*.json`` (one
    event a file: ``MessageEvent``, ``ActionEvent`` with its ``tool_call`` and the reply's
    ``llm_response_id``, ``ObservationEvent``, ...)."""
    held = Holdings()
    replies: set[str] = set()
    for event_file in sorted((path / "events").glob("*.json")):
        event = json.loads(event_file.read_text(encoding="utf-8"))
        kind = event.get("kind")
        if kind == "MessageEvent":
            held.messages += 1
            if event.get("source") == "agent":
                held.replies += 1
        elif kind == "ActionEvent":
            held.tool_calls += 1
            replies.add(str(event.get("llm_response_id")))
            if event.get("reasoning_content") or event.get("thinking_blocks"):
                held.reasoning += 1
        elif kind not in (
            "ObservationEvent",
            "SystemPromptEvent",
            "AgentErrorEvent",
            "ConversationStateUpdateEvent",
            "PauseEvent",
            "Condensation",
            "CondensationRequest",
            "UserRejectObservation",
        ):
            _unknown(held, str(kind), event)
    held.replies += len(replies)
    held.messages += len(replies)
    return [held]


# --- Inspect AI ----------------------------------------------------------------------------


def inspect(path: Path) -> list[Holdings]:
    """An Inspect log (``.json``, or ``.eval``: a zip with ``samples/<id>_epoch_<n>.json``):
    per sample its ``messages`` (content parts of type ``reasoning``; ``tool_calls``) and its
    ``events`` (a ``model`` event per request, with ``output.usage``)."""
    if path.suffix == ".eval":
        samples = _eval_samples(path)
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        samples = data.get("samples") or []
    return [_inspect_sample(s) for s in samples if isinstance(s, Mapping)]


def _eval_samples(path: Path) -> list[Any]:
    with zipfile.ZipFile(path) as archive:
        infos = sorted(
            (i for i in archive.infolist() if i.filename.startswith("samples/")),
            key=lambda i: i.filename,
        )
        plain = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
        return [
            json.loads(archive.read(i) if i.compress_type in plain else _zstd(path, i))
            for i in infos
        ]


def _zstd(path: Path, info: zipfile.ZipInfo) -> bytes:
    """A zip member compressed with Zstandard (Inspect's default, method 93, which Python's
    zipfile reads only from 3.14): its bytes found from the local header, decompressed."""
    import zstandard  # optional: only .eval logs need it

    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
        names = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
        handle.seek(info.header_offset + 30 + names)
        data = handle.read(info.compress_size)
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=info.file_size)


def _inspect_sample(sample: Mapping[str, Any]) -> Holdings:
    held = Holdings()
    for message in sample.get("messages") or []:
        role = message.get("role")
        if role in ("user", "assistant"):
            held.messages += 1
        if role == "assistant":
            held.replies += 1
            held.tool_calls += len(message.get("tool_calls") or [])
            content = message.get("content")
            if isinstance(content, list):
                held.reasoning += sum(
                    1
                    for part in content
                    if isinstance(part, Mapping)
                    and part.get("type") == "reasoning"
                    and (part.get("reasoning") or part.get("redacted"))
                )
            if message.get("model"):
                held.models[str(message["model"])] += 1
    scoring: set[Any] = set()
    for event in sample.get("events") or []:
        if not isinstance(event, Mapping):
            continue
        if event.get("event") == "span_begin" and (
            event.get("type") in ("scorer", "scorers") or event.get("parent_id") in scoring
        ):
            scoring.add(event.get("id"))
        elif event.get("event") == "model":
            usage = (event.get("output") or {}).get("usage")
            if event.get("span_id") in scoring:
                continue  # a model-graded scorer's call: not a request of the conversation
            if isinstance(usage, Mapping):
                keys = ("input_tokens", "input_tokens_cache_read", "input_tokens_cache_write")
                held.bills.append(sum(_int(usage.get(k)) for k in keys))
    return held


# --- aider ---------------------------------------------------------------------------------

_TOKENS = re.compile(r"^> Tokens: ([\d.,]+)(k?) sent", re.MULTILINE)
_MODEL = re.compile(r"^> (?:Main model|Model): (\S+)", re.MULTILINE)


def aider(path: Path) -> list[Holdings]:
    """``.aider.chat.history.md``: runs headed ``# aider chat started at``; the user's input in
    ``#### `` lines, aider's own output in ``> `` lines, the model's reply the other text;
    ``> Tokens: 2.4k sent, …`` after each request (its ``k`` a rounding)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    runs = re.split(r"^# aider chat started at .*$", text, flags=re.MULTILINE)[1:]
    return [_aider_run(run) for run in runs]


def _aider_run(run: str) -> Holdings:
    held = Holdings()
    state = None
    for line in run.splitlines():
        if line.startswith("#### "):
            if state != "user":
                held.messages += 1
            state = "user"
        elif line.rstrip() == ">" or line.startswith("> "):
            # aider's own output (a merge marker, ">>>>>>> REPLACE", is the reply's text)
            state = "tool"
        elif line.strip():
            if state != "reply":
                held.messages += 1
                held.replies += 1
            state = "reply"
    for model in _MODEL.findall(run):
        held.models[model] += 1
    for number, k in _TOKENS.findall(run):
        value = float(number.replace(",", ""))
        held.bills.append(int(value * 1000) if k else int(value))
    return held


# --- SpecStory -----------------------------------------------------------------------------

_SPEAKER = re.compile(r"^_\*\*(User|Assistant|Agent|Cursor)\b[^*]*\*\*_", re.MULTILINE)
_TOOL_PART = re.compile(
    r"(?:```bash\n|Read file:|Listed (?:current )?directory|Grep search|Searched |Edit file:|"
    r"Deleted |Could not find file|Tool use:|<tool-use\b|<details>\s*<summary>\s*(?:Tool use|"
    r"Searched|Read file|Listed|Grep|Edit file|Called MCP|MCP tool))"
)
_THINK = re.compile(r"<think>|<summary>\s*Thought Process", re.MULTILINE)


def specstory(path: Path) -> list[Holdings]:
    """SpecStory's Markdown export: ``_**User**_`` and ``_**Assistant**_`` (later ``_**Agent
    (model …)**_``) sections; an assistant section is cut in steps by ``---`` lines, and a step
    that opens with a tool's trace is a tool use — a terminal command (a ```` ```bash ````
    block), ``Read file:``, ``Listed directory``, ``Grep search``, a ``<details>`` whose summary
    names a search or a tool, a ``<tool-use>`` element; thinking is ``<think>`` or a "Thought
    Process" summary."""
    text = path.read_text(encoding="utf-8", errors="replace")
    held = Holdings()
    marks = list(_SPEAKER.finditer(text))
    for mark, after in zip(marks, [*marks[1:], None], strict=True):
        body = text[mark.end() : after.start() if after else len(text)]
        held.messages += 1
        if mark.group(1) == "User":
            continue
        held.replies += 1
        for step in re.split(r"^---$", body, flags=re.MULTILINE):
            if _TOOL_PART.match(step.strip() + "\n"):
                held.tool_calls += 1
        held.reasoning += len(_THINK.findall(body))
    return [held]


# --- OpenCode ------------------------------------------------------------------------------


def opencode(path: Path) -> list[Holdings]:
    """OpenCode's storage (``storage/``: ``session/<project>/<id>.json``, ``message/<session>/
    <id>.json`` with the role, ``modelID`` and the message's ``tokens``, ``part/<message>/
    <id>.json``: ``text``, ``reasoning``, ``tool``, ``step-finish`` with each step's tokens) —
    one conversation a session file."""
    root = path if path.is_dir() else path.parents[2]
    sessions = sorted((root / "session").glob("*/*.json")) if path.is_dir() else [path]
    return [_opencode_session(root, s) for s in sessions]


def _opencode_session(root: Path, session_file: Path) -> Holdings:
    session = json.loads(session_file.read_text(encoding="utf-8"))
    held = Holdings()
    for message_file in sorted((root / "message" / str(session.get("id"))).glob("*.json")):
        message = json.loads(message_file.read_text(encoding="utf-8"))
        held.messages += 1
        steps = 0
        if message.get("role") == "assistant":
            held.replies += 1
            held.models[str(message.get("modelID"))] += 1
        for part_file in sorted((root / "part" / str(message.get("id"))).glob("*.json")):
            part = json.loads(part_file.read_text(encoding="utf-8"))
            kind = part.get("type")
            if kind == "tool":
                held.tool_calls += 1
            elif kind == "reasoning" and part.get("text"):
                held.reasoning += 1
            elif kind == "step-finish":
                steps += 1
                _opencode_bill(held, part.get("tokens"))
            elif kind not in (
                "text",
                "step-start",
                "patch",
                "file",
                "snapshot",
                "agent",
                "compaction",
                "subtask",
                "retry",
            ):
                held.unaccounted[f"part {kind}"] += 1
        if message.get("role") == "assistant" and not steps:
            _opencode_bill(held, message.get("tokens"))
    return held


def _opencode_bill(held: Holdings, tokens: Any) -> None:
    if not isinstance(tokens, Mapping):
        return
    cache = tokens.get("cache") or {}
    billed = _int(tokens.get("input")) + _int(cache.get("read")) + _int(cache.get("write"))
    if billed == 0 and _int(tokens.get("output")) == 0:
        held.zero_bills += 1
    else:
        held.bills.append(billed)


def atif(path: Path) -> list[Holdings]:
    """An ATIF trajectory (Harbor's ``trajectory.json``): ``steps`` from ``system``, ``user``
    and ``agent``; an agent step is one reply (``message``, ``reasoning_content``,
    ``tool_calls``) billed by its ``metrics`` — ``prompt_tokens`` all the input (cache reads
    inside it). Each embedded subagent trajectory is a conversation of its own."""
    data = json.loads(path.read_text(encoding="utf-8"))
    trajectories = [data, *(data.get("subagent_trajectories") or [])]
    return [_atif_steps(t.get("steps") or []) for t in trajectories if isinstance(t, Mapping)]


def _atif_steps(steps: list[Any]) -> Holdings:
    held = Holdings()
    for step in steps:
        source = step.get("source") if isinstance(step, Mapping) else None
        if source not in ("system", "user", "agent"):
            _unknown(held, "step", step)
            continue
        if source == "user" and _text(step.get("message")).strip():
            held.messages += 1
        if source != "agent":
            continue
        calls = step.get("tool_calls")
        held.tool_calls += len(calls) if isinstance(calls, list) else 0
        said = _text(step.get("message")).strip()
        thought = str(step.get("reasoning_content") or "").strip()
        held.reasoning += 1 if thought else 0
        if said or thought or calls:
            held.messages += 1
            held.replies += 1
        metrics = step.get("metrics")
        if isinstance(metrics, Mapping):
            billed = _int(metrics.get("prompt_tokens"))
            if billed == 0 and _int(metrics.get("completion_tokens")) == 0:
                held.zero_bills += 1
            else:
                held.bills.append(billed)
            held.models[str(step.get("model_name") or "")] += 1
    return held


PARSERS: dict[str, Callable[[Path], list[Holdings]]] = {
    "claude_code": claude_code,
    "codex": codex,
    "gemini_cli": gemini_cli,
    "copilot": copilot,
    "mini_swe_agent": mini_swe_agent,
    "openhands": openhands,
    "inspect": inspect,
    "aider": aider,
    "specstory": specstory,
    "opencode": opencode,
    "atif": atif,
}
"""The census of each format, by the name of its folder (ctxlab's format names)."""


def census_of(fmt: str, path: Path) -> list[Holdings] | None:
    """The census of ``path`` read as ``fmt``; None when this census has no parser for it."""
    parser = PARSERS.get(fmt)
    return parser(path) if parser is not None else None


_PROVIDERS = (
    ("anthropic", ("claude",)),
    ("openai", ("gpt-", "o1", "o3", "o4", "codex", "chatgpt", "openai/")),
    ("google", ("gemini", "google/")),
    ("deepseek", ("deepseek",)),
    ("meta", ("llama", "meta-llama/")),
    ("mistral", ("mistral", "codestral", "devstral")),
    ("alibaba", ("qwen",)),
    ("xai", ("grok",)),
)


def provider_of(model: str) -> str | None:
    """The provider a model name belongs to, from the name alone (None when it does not say):
    ``litellm_proxy/anthropic/claude-…`` is Anthropic's, ``gpt-5.5`` OpenAI's."""
    name = model.lower().rsplit("/", 1)[-1]
    for provider, starts in _PROVIDERS:
        if name.startswith(starts) or any(f"/{s}" in model.lower() for s in starts):
            return provider
    for provider, starts in _PROVIDERS:  # a router's name for it: "openrouter-llama-4-…"
        if any(f"-{s}" in name for s in starts if not s.endswith("/")):
            return provider
    return None
