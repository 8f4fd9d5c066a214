"""Sessions known by where they live rather than by one file's content: a tool that keeps a
session as a folder of files (a Cline/Roo/Kilo task; an OpenCode session in its storage, the
messages and parts in folders beside it), or as a file whose name says what it is.

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
from ctxlab.io._opencode import from_opencode
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.util._jsonl import read_text

__all__ = ["companion", "located"]

_TASK_PARTS = {UI_FILE, "task_metadata.json", "context_history.json"}
"""The files of a task folder beside its API history (read with it, or not a conversation)."""


def located(path: Path, format: str | None, name: str | None) -> Transcript | None:
    """The session at ``path`` when where it lives says what it is (else None: read the file's
    content)."""
    storage = _opencode_storage(path) if format in (None, "opencode") else None
    if storage is not None:
        return _opencode_session(path, storage, name)
    if format in (None, "opencode") and path.suffix == ".json":
        root = _storage_root(path)
        if root is not None and not path.is_relative_to(root / "session"):
            raise _part_of_a_session(path, root)
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
    if path.name == "sessions.json" and path.parent.name == "sessions":
        return True
    # OpenCode's storage: a session's messages, parts, diffs, todos beside its session file.
    root = _storage_root(path)
    return root is not None and not path.is_relative_to(root / "session")


_STORAGE_KINDS = frozenset({"message", "part", "session_diff", "todo", "project", "session_share"})
"""The folders of OpenCode's storage beside ``session/`` (each session's messages, parts, diffs,
todos; the projects): parts of a session, not sessions."""
_IDS = ("ses_", "msg_", "prt_")
"""The prefixes of OpenCode's ids (``Identifier`` in OpenCode's source), which name the folders
and files of its storage."""


def _storage_root(path: Path) -> Path | None:
    """The OpenCode storage folder ``path`` is in — found by what it holds (``session/`` and
    ``message/`` folders, ``path`` named by OpenCode's ids), whatever the folder is called: a
    copy of ``~/.local/share/opencode/storage`` is often renamed."""
    for folder in path.parents:
        if not ((folder / "session").is_dir() and (folder / "message").is_dir()):
            continue
        inside = path.relative_to(folder).parts
        if folder.name == "storage" or (
            inside[0] in (_STORAGE_KINDS | {"session"})
            and (inside[0] == "project" or any(p.startswith(_IDS) for p in inside[1:]))
        ):
            return folder
    return None


def _opencode_storage(path: Path) -> Path | None:
    """The storage folder of a stored OpenCode session file
    (``storage/session/<project>/<session id>.json``), else None."""
    if path.suffix != ".json" or len(path.parents) < 3 or path.parents[1].name != "session":
        return None
    root = path.parents[2]
    if (root / "message" / path.stem).is_dir():
        return root
    # A session with no message yet has no folder of its own: known by its storage around it.
    return root if _storage_root(path) == root and path.stem.startswith("ses_") else None


def _part_of_a_session(path: Path, root: Path) -> MessageFormatError:
    """The error for a file of OpenCode's storage that is not a session: where its session is."""
    inside = path.relative_to(root).parts
    session = next((p for p in inside if p.startswith("ses_")), None)
    if session is None and inside[0] == "part" and len(inside) > 1:
        # A part's folder is its message's id; the message's folder is its session's.
        found = next(iter(sorted((root / "message").glob(f"*/{inside[1]}.json"))), None)
        session = found.parent.name if found is not None else None
    stored = next(iter(sorted((root / "session").glob(f"*/{session}.json"))), None)
    where = (
        f"load its session's file, {stored}"
        if stored is not None
        else "load a session's file, session/<project>/<session id>.json"
    )
    return MessageFormatError(
        f"{path} is a file of OpenCode's storage folder {root} (its {inside[0]}/), not a "
        f"session: {where}, or list its sessions with ctxlab.sessions({str(root)!r})"
    )


def _opencode_session(path: Path, root: Path, name: str | None) -> Transcript:
    session = _json(path)
    if not isinstance(session, dict):
        msg = f"{path}: an OpenCode session file is a JSON object (id, projectID, title, ...)"
        raise MessageFormatError(msg)
    messages = []
    # The messages' folder is the session's id (its file is named for it, with or without
    # the "ses_" prefix OpenCode gives it).
    own = session.get("id") if isinstance(session.get("id"), str) else None
    folder = root / "message" / (own if own and (root / "message" / own).is_dir() else path.stem)
    for message_path in sorted(folder.glob("*.json")):
        info = _json(message_path)
        key = info.get("id") if isinstance(info, dict) else None
        part_paths = sorted((root / "part" / str(key or message_path.stem)).glob("*.json"))
        messages.append({"info": info, "parts": [_json(p) for p in part_paths]})
    builder, system, notes = from_opencode(messages, str(path), stored=True)
    meta = {
        "source": "opencode",
        **{k: session[k] for k in ("id", "title", "version", "directory") if k in session},
        **notes,
    }
    return built_transcript(name or path.stem, builder, meta, system, ())


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
            f"{path} is not JSON ({where or 'nested too deeply'}); a task or session file of "
            "this tool is one JSON document — copy it again if it was cut off"
        )
        raise MessageFormatError(msg) from exc
