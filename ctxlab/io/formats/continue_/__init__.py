"""Continue sessions: ``~/.continue/sessions/<session id>.json`` (`ctxlab.io.formats.continue_.parse` says
what is read and where it was learned); ``sessions.json`` beside them is their list."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.continue_.parse import from_continue, is_continue_session


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a Continue session is a JSON object (sessionId, title, history)"
        raise MessageFormatError(msg)
    builder, system, notes = from_continue(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _session_list(path: Path) -> bool:
    # Continue's list of the sessions beside it (``~/.continue/sessions/sessions.json``).
    return path.name == "sessions.json" and path.parent.name == "sessions"


FORMAT = SessionFormat(
    name="continue",
    tool="Continue (IDE extensions and the cn CLI) sessions, to 2026-06",
    learned_from="continuedev/continue core/index.d.ts (Session, ChatHistoryItem), "
    "core/util/history.ts, gui/src/redux/util/constructMessages.ts",
    priority=90,
    never="other JSON objects: sessionId with a history of items holding a message",
    document=is_continue_session,
    read=_read,
    census="history items",
    part=_session_list,
)
