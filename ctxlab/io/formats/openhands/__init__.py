"""OpenHands, both generations: V0's event histories (an evaluation's ``output.jsonl``, a saved
trajectory) and completion logs, V1's conversation folders (``events/event-*.json`` beside
``base_state.json``) and completion logs — all of OpenHands in this package: the parsers
(`events`: V0 event histories; `logs`: both versions' completion logs; `v1`: V1 events, each
saying what it reads and where it was learned) and, here, how the kinds are told apart, read and
listed.

The four kinds never claim each other's files (``KINDS``; the detection test holds them to it):
a V1 log detector that claimed V0 logs read them without their tool calls, once."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import as_mapping
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.io.formats.openhands.events import (
    from_openhands_events,
    is_openhands_events,
    openhands_events_of,
)
from ctxlab.io.formats.openhands.logs import from_completion_log, is_v0_log, is_v1_log
from ctxlab.io.formats.openhands.v1 import EVENT_FILE, from_v1_events, is_v1_event, v1_folder_events
from ctxlab.messages._request import ToolSchema

KINDS = (
    ("V0 completion log", is_v0_log),
    ("V1 completion log", is_v1_log),
    ("V0 event history", is_openhands_events),
    ("V1 event", is_v1_event),
)
"""The kinds of OpenHands file, each told by what only it holds."""


def _is_openhands(value: Mapping[str, Any]) -> bool:
    return any(claims(value) for _, claims in KINDS)


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # One completion log (V0 or V1), a V1 conversation's events, or a V0 event history: an
    # evaluation's output, a trajectory.
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
    return _v0_history(data, where, name, episode, meta)


def _v0_history(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
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


def _conversation(
    path: Path, forced: bool, name: str | None, episode: int
) -> tuple[Transcript, list[Any] | None] | None:
    # A V1 conversation is read from its folder, its base_state.json or its events folder.
    folder = path
    if path.name == "base_state.json" or (path.name == "events" and path.is_dir()):
        folder = path.parent
    found = v1_folder_events(folder) if folder.is_dir() else None
    if found is None and (folder / "base_state.json").is_file() and folder.is_dir():
        msg = (
            f"{folder}: an OpenHands V1 conversation with no event yet (its base_state.json "
            "alone, no events/ folder or an empty one): nothing was said in it to load"
        )
        raise MessageFormatError(msg)
    if found is None:
        return None
    events, state = found
    transcript = v1_conversation(events, state, str(path), name or folder.resolve().name)
    return transcript, [*events, *([state] if state is not None else [])]


def _event_file(path: Path) -> bool:
    # A V1 conversation is one row (its base_state.json, else its folder), not one per event.
    return path.parent.name == "events" and EVENT_FILE.match(path.name) is not None


def _bare_conversations(listed: list[Path]) -> list[Path]:
    # The folders of V1 conversations written without base_state.json: each one row, the
    # folder (which `load` opens), since no file of it stands for the whole.
    folders = {p.parent.parent for p in listed if _event_file(p)}
    return sorted(f for f in folders if not (f / "base_state.json").is_file())


def _read_beside(path: Path) -> list[Path]:
    # A V1 conversation's base state is read with the events beside it (`_conversation`);
    # a conversation listed as its folder is every file under it already.
    return [path.parent / "events"] if path.name == "base_state.json" else []


FORMAT = SessionFormat(
    name="openhands",
    tool="OpenHands V0 (event histories, completion logs; 2024–2026) and V1 "
    "(software-agent-sdk conversation folders, completion logs)",
    learned_from="OpenHands/OpenHands openhands/llm/llm.py (log_completions), "
    "openhands/events/serialization; OpenHands/software-agent-sdk openhands/sdk/llm/llm.py, "
    "llm/utils/telemetry.py, conversation/ (events, base_state.json)",
    priority=190,
    never="one version's logs for the other's: V0 writes args/fncall_*, V1 latency_sec/"
    "context_window and never args",
    document=_is_openhands,
    records=is_openhands_events,
    kinds=KINDS,
    read=_read,
    place=_conversation,
    episodes=True,
    census="events, a log's messages and reply, a conversation's event files",
    part=_event_file,
    folders=_bare_conversations,
    reads=_read_beside,
)
