"""`sessions`: a folder of recorded sessions as a table, one row per file.

Point it at ``~/.claude/projects``, ``~/.codex/sessions``, ``~/.gemini/tmp`` or any folder:
every file that could be a session (``.jsonl``, ``.json``, ``.af``, aider's and SpecStory's
Markdown) gets a row — one per session when a session is several files (a Cline task, OpenCode's
storage) — with the format detected, its models, requests, tool calls, the conversation's size,
what the provider billed, its own compactions, what was skipped or repaired — or, when it does
not load, the reason in ``problem``. Files are read in parallel processes when there are many (parsing JSON holds the
interpreter lock), with a progress bar. Called again on a folder where no file changed, it
answers from memory (`ctxlab.io._sessions_cache`).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import CtxlabError, UsageError
from ctxlab.io._compaction_thresholds import COMPACTION_COLUMNS, compaction_columns
from ctxlab.io._files import path_problem, shown_path
from ctxlab.io._format import SessionFormat
from ctxlab.io._listing import (
    companion,
    listed,
    read_beside,
    session_folders,
    session_suffixes,
)
from ctxlab.io._load import read
from ctxlab.io._registry import added_here, generation, install
from ctxlab.io._sessions_cache import keep, kept, state_of
from ctxlab.io._sessions_rows import UNSETTLED, rows_of
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage
from ctxlab.tokens import MESSAGE_OVERHEAD, ApproximateCounter
from ctxlab.tokens._parts import block_parts
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SESSION_COLUMNS", "sessions"]

SESSION_COLUMNS = (
    "path",
    "name",
    "format",
    "models",
    "started",
    "span_seconds",
    "modified",
    "messages",
    "requests",
    "tool_calls",
    "conversation_tokens",
    "billed_input_tokens",
    "recorded_compactions",
    *COMPACTION_COLUMNS,  # issue 56: where each compaction fired, against its threshold
    "skipped",
    "repairs",
    "unaccounted",
    "problem",
    "episode",
    "subagent_of",
)
"""The columns of `sessions`, in order."""

_COUNTS = (
    "messages",
    "requests",
    "tool_calls",
    "conversation_tokens",
    "billed_input_tokens",
    "recorded_compactions",
    "skipped",
    "repairs",
    "episode",
)


class _Registered:
    # The default of ``suffixes``: the endings of the formats registered when `sessions` runs.
    def __repr__(self) -> str:
        return "<the registered formats' endings>"


REGISTERED = _Registered()
_PARALLEL_FROM = 24  # files: below this, starting processes costs more than it saves
_CHUNK = 8  # files a worker process reads at a time


def sessions(
    folder: str | os.PathLike[str],
    *,
    suffixes: Iterable[str] | _Registered = REGISTERED,
    workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every session file under ``folder`` (recursively), one row each (`SESSION_COLUMNS`).

    ``unaccounted`` says what the file holds that the load did not place (its census's
    inventory: "unaccounted: 3 usage fields (at $.data)"), None when nothing is.
    ``conversation_tokens`` is the final conversation's size, estimated (about 4 characters a
    token); ``billed_input_tokens`` the input the provider billed over all requests, where the
    file records usage; ``span_seconds`` the recording's clock, from its first dated reply to
    its last (None when the file records no times). A subagent is listed apart, with the session it belongs to in
    ``subagent_of``: its own file's row (Claude Code's ``<session>/subagents/agent-*.jsonl``),
    or, for one held in the session's file, a row of that file with its ``episode``. An
    OpenHands V1 conversation is one row: its ``base_state.json``, else its folder. A file
    that does not load has its reason in ``problem``: nothing in the folder is left out. Open a
    row with ``ctxlab.load(row.path, episode=row.episode)`` or ``Lab.open(row, ...)``; ``sweep``
    takes the frame's ``path`` column. Called again on a folder where no file was added,
    removed or changed (its size and modification time), it returns a copy of the table it
    made, reading nothing (`ctxlab.io._sessions_cache`); where some were, it reads only the
    sessions whose files changed — its own, or one its format reads beside it (a subagent's, a
    task's UI log) —, and a file changed in the last two seconds (the live session) at every
    call (`ctxlab.io._sessions_rows`). From a new process too: tables and rows are kept on
    disk, in ``$CTXLAB_SESSIONS_CACHE`` (``off``: not kept) or ``~/.cache/ctxlab/sessions``.

    Args:
        folder: The folder to read.
        suffixes: The file endings that may hold a session (one ending may be given as a
            string: ``".traj"``); by default JSON, JSON Lines and every registered format's
            endings (``.traj``, ``.eval``, ``.af``, aider's and SpecStory's Markdown, ...).
        workers: Processes to read with (default: the CPU count; 1 reads in this process).
        progress: Show a ``tqdm.auto`` progress bar.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    wanted = _suffixes(session_suffixes() if isinstance(suffixes, _Registered) else suffixes)
    root = _folder(folder)
    count = _workers(workers)
    state = state_of(root, wanted, generation(), read_beside)
    again = kept(state)  # the folder as it was when last read: its table
    if again is not None:
        return again
    files = _session_files(root, wanted)
    bar = tqdm(total=len(files), disable=not progress, unit="file")
    key = (str(root.resolve()), wanted, generation())
    rows = rows_of(files, key, read_beside, lambda new: _read_rows(new, count, bar.update))
    bar.update(len(files) - bar.n)  # (those whose rows were kept)
    bar.close()
    frame = pd.DataFrame(rows, columns=list(SESSION_COLUMNS))
    # Counts as integers with gaps (a file that did not load has none), not floats.
    frame = frame.astype(dict.fromkeys(_COUNTS, "Int64"))
    keep(None if any(row.get(UNSETTLED) for row in rows) else state, frame)  # (see UNSETTLED)
    return frame


def _folder(folder: Any) -> Path:
    """``folder`` as the folder it names, user (``~``) expanded; a `UsageError` when it is not
    one."""
    given = os.fspath(folder) if isinstance(folder, os.PathLike) else folder
    if not isinstance(given, str):
        msg = (
            f"folder must be a folder of session files (text or a pathlib.Path), got {shown(given)}"
        )
        raise UsageError(msg)
    root = Path(given).expanduser()  # a name too long or with a NUL: said just below
    problem = path_problem(root)
    if problem is not None:
        msg = f"{shown_path(root)!r} is not a folder ({problem}); give a folder of session files"
        raise UsageError(msg)
    if not root.is_dir():
        msg = f"{str(root)!r} is not a folder; give a folder of session files"
        raise UsageError(msg)
    return root


def _read_rows(
    files: list[Path], count: int, done: Callable[[int], Any]
) -> list[list[dict[str, Any]]]:
    """The rows of each of ``files``, read by ``count`` processes when there are many
    (``done`` told of each file read)."""
    if count <= 1 or len(files) < _PARALLEL_FROM:
        rows = []
        for path in files:
            rows.extend(session_rows([path]))
            done(1)
        return rows
    pool = _pool(count)
    if pool is None:  # formats a spawned worker could not be given: read here
        return _read_rows(files, 1, done)
    rows = []
    with pool:
        # In chunks of their own: a chunk whose process dies costs its rows' figures (each
        # says so), never the listing.
        chunks = [files[k : k + _CHUNK] for k in range(0, len(files), _CHUNK)]
        futures = [pool.submit(session_rows, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                got = future.result()
            except Exception as exc:  # the reading process died (killed, out of memory)
                failed = f"not read: its process failed ({exc!r})"
                got = [[{**_unread(path, failed), UNSETTLED: True}] for path in chunk]
            rows.extend(got)
            done(len(chunk))
    return rows


def _pool(count: int) -> ProcessPoolExecutor | None:
    """Worker processes that read every registered format: a forked worker inherits the
    registry; a spawned one (macOS, Windows) is given the formats registered here, unless one
    was defined in a notebook, where no other process can import it (None: read here)."""
    context = _CONTEXT or multiprocessing.get_context()
    added = added_here()
    if not added or context.get_start_method() == "fork":
        return ProcessPoolExecutor(max_workers=count, mp_context=context)
    if not all(_importable(f) for f in added):
        return None
    return ProcessPoolExecutor(
        max_workers=count, mp_context=context, initializer=install, initargs=(added,)
    )


_CONTEXT: Any = None
"""The multiprocessing context of the workers (None: the platform's; tests set "spawn")."""


def _importable(declared: SessionFormat) -> bool:
    # Pickled by reference, each function must be importable in the worker: not one defined
    # in a notebook's __main__ (a script's __main__ is run again by a spawned worker).
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None):
        return True
    return not any(
        getattr(one, "__module__", None) == "__main__"
        for one in _callables(tuple(vars(declared).values()))
    )


def _callables(value: Any) -> Iterator[Any]:
    # The functions a declaration holds: as fields, or in tuples of them (``kinds``' pairs).
    if isinstance(value, tuple):
        for item in value:
            yield from _callables(item)
    elif callable(value):
        yield value


def _suffixes(value: Any) -> tuple[str, ...]:
    """``suffixes`` as file endings: a string is one ending (iterated, ``".traj"`` would be its
    characters, and every file ending in ``t`` a session)."""
    items = (value,) if isinstance(value, str) else value
    endings = tuple(items) if isinstance(items, Iterable) else None
    if endings is None or not all(isinstance(s, str) and s for s in endings):
        msg = (
            "suffixes must be a file ending or a list of them (e.g. '.jsonl' or "
            f"['.jsonl', '.traj']), each a non-empty string; got {value!r}"
        )
        raise UsageError(msg)
    return tuple(s.lower() for s in endings)


def _session_files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The files under ``root`` that are sessions of their own, in order: by suffix, in no
    hidden folder below it (a .git, a cache), not a part of a session listed under another."""
    found = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.name.lower().endswith(suffixes)
        and not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])
    ]
    return sorted(
        [
            p
            for p in found
            if not companion(p)  # a part of a session listed under another of its files
            and listed(p)  # of an ending other files share (Markdown): a format claims it
        ]
        + session_folders(found)  # a folder that is a session of its own (its formats say)
    )


def _workers(value: Any) -> int:
    if value is None:
        return os.cpu_count() or 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = (
            f"workers must be a whole number from 1 (1 reads in this process; None: one per "
            f"CPU), got {value!r}"
        )
        raise UsageError(msg)
    return value


def session_rows(paths: list[Path]) -> list[list[dict[str, Any]]]:
    """The rows of each of several files (what one worker process reads): the file's session,
    then each subagent it holds without a file of its own (``episode`` N; one with its own
    ``agent-*.jsonl`` is that file's row)."""
    found: list[list[dict[str, Any]]] = []
    for path in paths:
        row, transcript = _row(path)
        rows = [row]
        for entry in (transcript.meta.get("subagents") or ()) if transcript is not None else ():
            if isinstance(entry, dict) and not entry.get("file") and _whole(entry.get("episode")):
                rows.append(_row(path, int(entry["episode"]))[0])
        found.append(rows)
    return found


def _unread(path: Path, problem: str | None, episode: int = 0) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(SESSION_COLUMNS)
    row.update(path=str(path), name=path.stem, problem=problem, episode=episode)
    return row


def session_row(path: Path) -> dict[str, Any]:
    """The row of one file's session (`SESSION_COLUMNS`); a file that does not load — or that
    went away while the folder was listed, or whose figures are odd — has ``problem``, never an
    error."""
    return _row(path)[0]


def _row(path: Path, episode: int = 0) -> tuple[dict[str, Any], Transcript | None]:
    try:
        modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except (OSError, OverflowError, ValueError) as exc:
        problem = f"cannot read it: {getattr(exc, 'strerror', None) or exc}"
        return {**_unread(path, problem, episode), UNSETTLED: True}, None
    try:
        transcript = read(path, episode=episode)
    except CtxlabError as exc:
        return {**_unread(path, str(exc), episode), "modified": modified}, None
    except (OSError, RecursionError, MemoryError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
        return {**_unread(path, problem, episode), "modified": modified, UNSETTLED: True}, None
    row = _unread(path, None, episode)
    row["modified"] = modified
    try:
        row.update(_figures(transcript))
    except Exception as exc:  # an odd figure in the file's meta: said on its row
        row["problem"] = f"loaded, but its figures could not be read: {type(exc).__name__}: {exc}"
    return row, transcript


def _figures(transcript: Transcript) -> dict[str, Any]:
    meta = transcript.meta
    models = meta.get("models")
    skipped = meta.get("skipped")
    started = meta.get("startTime") or meta.get("started")
    census = transcript.census
    return {
        "name": transcript.name,
        "format": str(meta.get("source") or "ctxlab"),
        "models": (", ".join(str(m) for m in models) or None)
        if isinstance(models, list | tuple)
        else None,
        "started": started if isinstance(started, str | int | float) else None,
        "span_seconds": _span(transcript.times),
        "messages": len(transcript.messages),
        "requests": sum(isinstance(m, AssistantMessage) for m in transcript.messages),
        "tool_calls": sum(len(getattr(m, "tool_uses", ())) for m in transcript.messages),
        "conversation_tokens": _size(transcript.messages),
        "billed_input_tokens": sum(u.total_input_tokens for u in transcript.usage.values())
        if transcript.usage
        else None,
        "recorded_compactions": _length(meta.get("compactions")),
        **compaction_columns(transcript),
        "skipped": sum(v for v in skipped.values() if _whole(v))
        if isinstance(skipped, dict)
        else 0,
        "repairs": _length(meta.get("repairs")),
        "unaccounted": (census.unplaced_line() or None) if census is not None else None,
        "subagent_of": str(meta["subagent_of"]) if meta.get("subagent_of") else None,
    }


def _size(messages: Iterable[Any]) -> int:
    # The conversation's size as ``TokenCache(ApproximateCounter()).messages`` counts it, without
    # the content hashes a cache is keyed by: a listing counts each message once.
    count = ApproximateCounter().count_text
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD
        for block in message.content:
            fixed, texts = block_parts(block)
            total += fixed + sum(count(text) for text in texts)
    return total


def _span(times: dict[int, float]) -> float | None:
    # The recording's clock: from its earliest dated reply to its latest (None: no clock).
    return max(times.values()) - min(times.values()) if times else None


def _length(value: Any) -> int:
    return len(value) if isinstance(value, list | tuple) else 0


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53
