"""OpenCode sessions: ``opencode export`` output, or a session as OpenCode keeps it in its
storage folder (``session/<project>/<session id>.json``, its messages in ``message/<session
id>/``, their parts in ``part/<message id>/``) — `ctxlab.io.formats.opencode.parse` says what is read and
where it was learned. A storage's other files are parts of a session, not sessions."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._json_file import json_file
from ctxlab.io._readers import built_transcript
from ctxlab.io._sessions_rows import SETTLED_NS
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.opencode.parse import from_opencode, is_opencode_export

_STORAGE_KINDS = frozenset({"message", "part", "session_diff", "todo", "project", "session_share"})
"""The folders of OpenCode's storage beside ``session/`` (each session's messages, parts, diffs,
todos; the projects): parts of a session, not sessions."""
_IDS = ("ses_", "msg_", "prt_")
"""The prefixes of OpenCode's ids (``Identifier`` in OpenCode's source), which name the folders
and files of its storage."""


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    # ``opencode export`` output (a stored session is read from its folders by `_stored`).
    if not isinstance(data, Mapping) or not isinstance(data.get("messages"), list):
        msg = f"{where}: an OpenCode export is a JSON object with 'info' and 'messages'"
        raise MessageFormatError(msg)
    builder, system, notes = from_opencode(data["messages"], where)
    info = data["info"] if isinstance(data.get("info"), Mapping) else {}
    meta.update({k: info[k] for k in ("id", "title", "version", "directory") if k in info})
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _stored(
    path: Path, forced: bool, name: str | None, episode: int
) -> tuple[Transcript, list[Any] | None] | None:
    # A session file of the storage, read with its messages and parts; any other file of the
    # storage is refused, saying where its session is.
    storage = _opencode_storage(path)
    if storage is not None:
        return _session(path, storage, name), None
    if path.suffix == ".json":
        root = _storage_root(path)
        if root is not None and not path.is_relative_to(root / "session"):
            raise _part_of_a_session(path, root)
    return None


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


def _session(path: Path, root: Path, name: str | None) -> Transcript:
    session = json_file(path)
    if not isinstance(session, dict):
        msg = f"{path}: an OpenCode session file is a JSON object (id, projectID, title, ...)"
        raise MessageFormatError(msg)
    messages = []
    # The messages' folder is the session's id (its file is named for it, with or without
    # the "ses_" prefix OpenCode gives it).
    own = session.get("id") if isinstance(session.get("id"), str) else None
    folder = root / "message" / (own if own and (root / "message" / own).is_dir() else path.stem)
    for message_path in sorted(folder.glob("*.json")):
        info = json_file(message_path)
        key = info.get("id") if isinstance(info, dict) else None
        part_paths = sorted((root / "part" / str(key or message_path.stem)).glob("*.json"))
        messages.append({"info": info, "parts": [json_file(p) for p in part_paths]})
    builder, system, notes = from_opencode(messages, str(path), stored=True)
    meta = {
        "source": "opencode",
        **{k: session[k] for k in ("id", "title", "version", "directory") if k in session},
        **notes,
    }
    return built_transcript(name or path.stem, builder, meta, system, ())


def _read_beside(path: Path) -> list[Path]:
    """What reading a stored session file looks at besides it (`_session`): its messages'
    folder (named for the session's id, else for its file), and each message's parts' folder
    (named for the message's id, else for its file); nothing for any other file. A folder
    named and not there is watched too: its coming makes the file a session."""
    if path.suffix != ".json" or len(path.parents) < 3 or path.parents[1].name != "session":
        return []
    root = path.parents[2]
    named = _id_in(path)
    own = named if isinstance(named, str) and named else None
    found = [root / "message" / name for name in sorted({path.stem, own or path.stem})]
    if _opencode_storage(path) is None:
        # Known by the storage around it once it has a `message/` folder (`_storage_root`):
        # any session's coming makes this file one, though no file of its own changed.
        messages = root / "message"
        return found if messages.is_dir() else [*found, messages]
    folder = root / "message" / (own if own and (root / "message" / own).is_dir() else path.stem)
    for message_path in sorted(folder.glob("*.json")):
        found.append(root / "part" / str(_id_in(message_path) or message_path.stem))
    return found


_IDS_READ: dict[tuple[str, int, int], Any] = {}
"""The id of each storage file read for `_read_beside`, by its path, size and time: a folder
asked for again decodes only the files that changed. A file changed in the last two seconds
(`SETTLED_NS`) is read but not kept: a rewrite of the same size within the clock's tick would
keep its time too (git's "racily clean" files), and OpenCode names its folders by these ids."""


def _id_in(path: Path) -> Any:
    # The file's "id" as `_session` reads it (None: none, or not readable: read by its name).
    try:
        found = path.stat()
    except OSError:
        return None
    key = (str(path), found.st_size, found.st_mtime_ns)
    if key in _IDS_READ:
        return _IDS_READ[key]
    try:
        value = json_file(path)
    except (MessageFormatError, OSError, ValueError):
        value = None
    named = value.get("id") if isinstance(value, dict) else None
    if found.st_mtime_ns <= time.time_ns() - SETTLED_NS:  # (see _IDS_READ)
        if len(_IDS_READ) > 100_000:  # (a bound: a long-running kernel over many storages)
            _IDS_READ.clear()
        _IDS_READ[key] = named
    return named


def _storage_part(path: Path) -> bool:
    # A session's messages, parts, diffs, todos beside its session file.
    root = _storage_root(path)
    return root is not None and not path.is_relative_to(root / "session")


FORMAT = SessionFormat(
    name="opencode",
    tool="OpenCode (sst/opencode, anomalyco/opencode) exports and storage, 2026",
    learned_from="packages/opencode/src/session/message-v2.ts, src/cli/cmd/export.ts, "
    "src/session/index.ts",
    priority=120,
    never="other JSON objects: an export's info with messages of {info, parts}",
    document=is_opencode_export,
    read=_read,
    place=_stored,
    census="messages and parts (a storage's files)",
    part=_storage_part,
    reads=_read_beside,
)
