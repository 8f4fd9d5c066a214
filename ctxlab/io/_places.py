"""Sessions known by where they live rather than by one file's content: a tool that keeps a
session as a folder of files (a Cline/Roo/Kilo task), or as a file whose name says what it is.

`located` reads such a session from any of its paths (the folder or one of its files) and
`companion` tells `sessions` which files are parts of a session listed under another of its
files, so that a folder of them is one row, not one per part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._cline import HISTORY_FILE, UI_FILE, app_of_path, from_cline
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.util._jsonl import read_text

__all__ = ["companion", "located"]

_TASK_PARTS = {UI_FILE, "task_metadata.json", "context_history.json"}
"""The files of a task folder beside its API history (read with it, or not a conversation)."""


def located(path: Path, format: str | None, name: str | None) -> Transcript | None:
    """The session at ``path`` when where it lives says what it is (else None: read the file's
    content)."""
    if format not in (None, "cline"):
        return None
    task = _task_folder(path)
    if task is None:
        if format == "cline" and path.is_dir():
            msg = f"{path}: not a Cline/Roo/Kilo task folder (it holds no {HISTORY_FILE})"
            raise MessageFormatError(msg)
        return None
    return _cline_task(task, name)


def companion(path: Path) -> bool:
    """Whether ``path`` is a part of a session that `sessions` lists under another file."""
    if path.name in _TASK_PARTS and (path.parent / HISTORY_FILE).is_file():
        return True
    # Continue's list of the sessions beside it (``~/.continue/sessions/sessions.json``).
    return path.name == "sessions.json" and path.parent.name == "sessions"


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


def _cline_task(folder: Path, name: str | None) -> Transcript:
    history_path, ui_path = folder / HISTORY_FILE, folder / UI_FILE
    history = _json(history_path)
    ui = _json(ui_path) if ui_path.is_file() else None
    app = app_of_path(folder.resolve().parts)
    builder, notes = from_cline(history, ui, str(history_path), app)
    if ui is None:
        notes["usage_missing"] = f"no {UI_FILE} beside the history: the task's usage is unknown"
    meta = {"source": "cline", "task_id": folder.name, **notes}
    return built_transcript(name or folder.name, builder, meta, "", ())


def _json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else ""
        msg = (
            f"{path} is not JSON ({where or 'nested too deeply'}); a Cline/Roo/Kilo task file "
            "is one JSON document — copy it again if it was cut off"
        )
        raise MessageFormatError(msg) from exc
