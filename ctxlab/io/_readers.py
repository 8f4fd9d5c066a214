"""The readers of the formats that are one whole document (or a file of records) rather than a
list of messages — each hands its conversation to a `ConversationBuilder` — and the
`Transcript` every reader ends in. `ctxlab.io._load` picks the reader."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._autogen import from_autogen
from ctxlab.io._build import ConversationBuilder, as_mapping
from ctxlab.io._census import Census
from ctxlab.io._chat import from_anthropic, from_openai, tool_schemas
from ctxlab.io._cline import from_cline
from ctxlab.io._codex import from_codex
from ctxlab.io._codex_exec import from_codex_exec
from ctxlab.io._compactions import place_compactions
from ctxlab.io._continue import from_continue
from ctxlab.io._copilot import from_copilot
from ctxlab.io._frameworks import from_langchain, from_pydantic_ai
from ctxlab.io._gemini import from_gemini_cli, from_gemini_contents
from ctxlab.io._gemini_stream import from_gemini_stream
from ctxlab.io._goose import from_goose
from ctxlab.io._inspect import from_inspect_sample, inspect_samples
from ctxlab.io._letta import from_letta
from ctxlab.io._mini_swe_agent import from_mini_swe_agent
from ctxlab.io._openai_responses import from_openai_responses
from ctxlab.io._opencode import from_opencode
from ctxlab.io._openhands import from_openhands_events, is_openhands_events, openhands_events_of
from ctxlab.io._openhands_logs import from_completion_log, is_v0_log, is_v1_log
from ctxlab.io._openhands_v1 import from_v1_events, is_v1_event
from ctxlab.io._otel import from_otel
from ctxlab.io._smolagents import from_smolagents
from ctxlab.io._swe_agent import from_swe_agent
from ctxlab.io._transcript import Transcript
from ctxlab.messages._request import ToolSchema

__all__ = ["DOCUMENTS", "built_transcript", "from_data", "v1_conversation"]


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
    others = [r for n, r in enumerate(data) if n != episode]
    builder.record("other episode", len(others), raw=others)
    builder.skip("another episode (episode=N opens it)")
    return built_transcript(name, builder, meta, system, ())


def _otel(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, system, tools, notes = from_otel(data, where, episode)
    return built_transcript(name, builder, {**meta, **notes}, system, tools)


def _gemini_cli(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, notes = from_gemini_cli(data if isinstance(data, list) else [data], where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _gemini(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list):
        msg = f"{where}: Gemini contents are a list of {{role, parts}} objects"
        raise MessageFormatError(msg)
    return built_transcript(name, from_gemini_contents(data, where), meta, "", ())


def _codex(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, system, notes = from_codex(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _copilot(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, system, notes = from_copilot(enumerate(lines, 1), where)
    # A session is a folder named by its id, holding events.jsonl: named for the session.
    named = str(notes.get("session_id") or name) if name == "events" else name
    return built_transcript(named, builder, {**meta, **notes}, system, ())


def _inspect(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: an Inspect log is a JSON object (or an .eval zip)"
        raise MessageFormatError(msg)
    samples = inspect_samples(data, where)
    if not 0 <= episode < len(samples):
        msg = f"{where}: no sample {episode} (the log holds {len(samples)}, from 0)"
        raise MessageFormatError(msg)
    builder, system, notes = from_inspect_sample(samples[episode], f"{where} sample {episode}")
    others = [s for n, s in enumerate(samples) if n != episode]
    builder.record("other sample", len(others), raw=others)
    builder.skip("another sample (episode=N opens it)")
    spec = data["eval"] if isinstance(data.get("eval"), Mapping) else {}
    # The run's settings (a mock model's scripted outputs among them) and its totals.
    builder.set_aside(spec, "the run's settings")
    builder.set_aside(data.get("stats"), "the run's totals")
    notes.update({k: spec[k] for k in ("task", "model") if isinstance(spec.get(k), str)})
    notes.setdefault("models", [spec["model"]] if isinstance(spec.get("model"), str) else [])
    notes["samples"] = len(samples)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _swe_agent(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a SWE-agent trajectory is a JSON object"
        raise MessageFormatError(msg)
    builder, system = from_swe_agent(data, where)
    return built_transcript(name, builder, meta, system, ())


def _mini_swe_agent(
    data: Any, where: str, name: str, episode: int, meta: dict[str, Any]
) -> Transcript:
    builder, system, notes = from_mini_swe_agent(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _openhands(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # One completion log (V0 or V1: `ctxlab.io._openhands_logs`), a V1 conversation's events
    # (`ctxlab.io._openhands_v1`), or a V0 event history: an evaluation's output, a trajectory.
    if is_v0_log(data) or is_v1_log(data):
        builder, system, tools, notes = from_completion_log(data, where)
        schemas = tool_schemas(tools, where)
        return built_transcript(name, builder, {**meta, **notes}, system, schemas)
    if is_v1_event(data):
        msg = (
            f"{where} is one event of an OpenHands V1 conversation: load the conversation's "
            "folder (the one holding events/)"
        )
        raise MessageFormatError(msg)
    if isinstance(data, list) and data and is_v1_event(data[0]):
        return v1_conversation(data, None, where, name)
    if not is_openhands_events(data) and not (
        isinstance(data, list) and data and is_openhands_events(data[0])
    ):
        msg = (
            f"{where}: an OpenHands file is an event history (a 'history' list, or a list of "
            "events) or a completion log (its 'messages' or 'fncall_messages' with the "
            "'response')"
        )
        raise MessageFormatError(msg)
    events, notes = openhands_events_of(data, where, episode)
    builder = from_openhands_events(events, where)
    if notes.get("models"):  # the run's config names its model whole (its provider too)
        builder.notes.pop("models", None)
    instance = (
        data[episode] if isinstance(data, list) and "history" in as_mapping(data[0]) else data
    )
    builder.set_aside(as_mapping(instance).get("metrics"), "the run's totals")
    rest = data[:episode] + data[episode + 1 :] if isinstance(data, list) else []
    others = rest if isinstance(data, list) and "history" in as_mapping(data[0]) else []
    builder.record("other instance", len(others), raw=others)
    builder.skip("another instance (episode=N opens it)")
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def v1_conversation(
    events: list[Any], state: Mapping[str, Any] | None, where: str, name: str
) -> Transcript:
    """An OpenHands V1 conversation of its events (in order) and base state (None: none)."""
    builder, system, tools, notes = from_v1_events(events, state, where)
    meta = {"source": "openhands", "version": 1, **notes}
    return built_transcript(name, builder, meta, system, _v1_tools(tools, where))


def _v1_tools(tools: list[Any], where: str) -> tuple[ToolSchema, ...]:
    # A V1 tool definition: its name, description and ``parameters`` schema (or an OpenAI one).
    return tool_schemas([t for t in tools if isinstance(t, Mapping) and t.get("name")], where)


def _cline(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # An API history given alone (a task folder is read with its UI log by `_places`).
    builder, notes = from_cline(data, None, where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _continue(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a Continue session is a JSON object (sessionId, title, history)"
        raise MessageFormatError(msg)
    builder, system, notes = from_continue(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _codex_exec(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, notes = from_codex_exec(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _gemini_stream(
    data: Any, where: str, name: str, episode: int, meta: dict[str, Any]
) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, notes = from_gemini_stream(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _letta(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a Letta agent file is a JSON object (agents, tools, ...)"
        raise MessageFormatError(msg)
    builder, system, tools, notes = from_letta(data, where, episode)
    return built_transcript(name, builder, {**meta, **notes}, system, tools)


def _autogen(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: an AutoGen state is a JSON object (type, version, ...)"
        raise MessageFormatError(msg)
    builder, system, notes = from_autogen(data, where, episode)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _smolagents(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list):
        msg = f"{where}: smolagents memory is a list of steps (agent.memory.get_full_steps())"
        raise MessageFormatError(msg)
    builder, system, notes = from_smolagents(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _opencode(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # ``opencode export`` output (a stored session is read from its folders by `_places`).
    if not isinstance(data, Mapping) or not isinstance(data.get("messages"), list):
        msg = f"{where}: an OpenCode export is a JSON object with 'info' and 'messages'"
        raise MessageFormatError(msg)
    builder, system, notes = from_opencode(data["messages"], where)
    info = data["info"] if isinstance(data.get("info"), Mapping) else {}
    meta.update({k: info[k] for k in ("id", "title", "version", "directory") if k in info})
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _goose(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, notes, tools = from_goose(data if isinstance(data, list) else [data], where)
    return built_transcript(name, builder, {**meta, **notes}, "", tools)


def built_transcript(
    name: str,
    builder: ConversationBuilder,
    meta: dict[str, Any],
    system: str,
    tools: tuple[ToolSchema, ...],
) -> Transcript:
    messages, notes, usage, times = builder.finish()
    if not messages:
        census = Census.from_meta(notes.get("census"))
        said = f" ({census})" if census is not None and census.read else ""
        msg = f"{builder.where}: no messages{said}"
        raise MessageFormatError(msg)
    place_compactions(meta, messages)
    return Transcript(
        name=name,
        meta={**meta, **notes},
        system=system,
        messages=tuple(messages),
        tools=tools,
        usage=usage,
        times=times,
    )


def from_data(data: Any, kind: str, where: str, name: str, episode: int) -> Transcript:
    """The transcript of decoded ``data`` read as ``kind``: a whole-document format's reader,
    or a list of chat messages (or a request holding one)."""
    meta: dict[str, Any] = {"source": kind}
    document = DOCUMENTS.get(kind)
    if document is not None:
        return document(data, where, name, episode, meta)
    return _messages(data, kind, where, name, meta)


def _messages(data: Any, kind: str, where: str, name: str, meta: dict[str, Any]) -> Transcript:
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
    return built_transcript(name, builder, meta, system, tools)


def _system(value: Any) -> str:
    if isinstance(value, list):
        return "\n\n".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping))
    return value if isinstance(value, str) else ""


DOCUMENTS: dict[str, Callable[[Any, str, str, int, dict[str, Any]], Transcript]] = {
    "tau_bench": _tau_bench,
    "otel": _otel,
    "gemini_cli": _gemini_cli,
    "gemini": _gemini,
    "codex": _codex,
    "copilot": _copilot,
    "inspect": _inspect,
    "swe_agent": _swe_agent,
    "openhands": _openhands,
    "mini_swe_agent": _mini_swe_agent,
    "cline": _cline,
    "continue": _continue,
    "codex_exec": _codex_exec,
    "gemini_stream": _gemini_stream,
    "letta": _letta,
    "autogen": _autogen,
    "smolagents": _smolagents,
    "opencode": _opencode,
    "goose": _goose,
}
"""The formats read as a whole document (one reader each), not as a list of messages."""
