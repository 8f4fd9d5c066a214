"""Cline, Roo Code and Kilo Code task folders (`ctxlab.io.formats.cline.parse` says what is read and where it
was learned): a task is its folder, read from the folder or either of its two files; an API
history given alone reads without the UI log's usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._json_file import json_file
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.cline.parse import (
    HISTORY_FILE,
    UI_FILE,
    app_of_path,
    from_cline,
    is_cline_history,
)

_TASK_PARTS = {UI_FILE, "task_metadata.json", "context_history.json"}
"""The files of a task folder beside its API history (read with it, or not a conversation)."""


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # An API history given alone (a task folder is read with its UI log by `_task`).
    builder, notes = from_cline(data, None, where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _task(
    path: Path, forced: bool, name: str | None, episode: int
) -> tuple[Transcript, list[Any] | None] | None:
    folder = _task_folder(path)
    if folder is None:
        if forced and path.is_dir():
            msg = f"{path}: not a Cline/Roo/Kilo task folder (it holds no {HISTORY_FILE})"
            raise MessageFormatError(msg)
        return None
    history_path, ui_path = folder / HISTORY_FILE, folder / UI_FILE
    history = json_file(history_path)
    ui = json_file(ui_path) if ui_path.is_file() else None
    app = app_of_path(folder.resolve().parts)
    builder, notes = from_cline(history, ui, str(history_path), app)
    if ui is None:
        notes["usage_missing"] = f"no {UI_FILE} beside the history: the task's usage is unknown"
    meta = {"source": "cline", "task_id": folder.name, **notes}
    return built_transcript(name or folder.name, builder, meta, "", ()), None


def _task_folder(path: Path) -> Path | None:
    if path.is_dir():
        return path if (path / HISTORY_FILE).is_file() else None
    if path.name == HISTORY_FILE or (
        path.name == UI_FILE and (path.parent / HISTORY_FILE).is_file()
    ):
        return path.parent
    if path.name == UI_FILE:
        msg = (
            f"{path} is a Cline/Roo/Kilo UI log; its conversation is in {HISTORY_FILE} beside "
            "it, which is missing: load the task folder that holds both"
        )
        raise MessageFormatError(msg)
    return None


def _task_part(path: Path) -> bool:
    # Listed under the task's history, not a session of its own.
    return path.name in _TASK_PARTS and (path.parent / HISTORY_FILE).is_file()


def _read_beside(path: Path) -> list[Path]:
    # A task's history is read with the UI log beside it (`_task`); nothing else is.
    return [path.parent / UI_FILE] if path.name == HISTORY_FILE else []


FORMAT = SessionFormat(
    name="cline",
    tool="Cline, Roo Code and Kilo Code task folders (api_conversation_history.json, "
    "ui_messages.json)",
    learned_from="cline/cline src/core/storage/disk.ts, src/shared/ExtensionMessage.ts; "
    "RooCodeInc/Roo-Code src/core/task-persistence/apiMessages.ts (2026)",
    priority=150,
    never="Anthropic messages given alone: an API history has Cline's own fields (ts, ...)",
    records=is_cline_history,
    read=_read,
    place=_task,
    census="the task's two files: API history items and UI messages",
    part=_task_part,
    reads=_read_beside,
)
