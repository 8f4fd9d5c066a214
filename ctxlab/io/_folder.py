"""`sessions`: a folder of recorded sessions as a table, one row per file.

Point it at ``~/.claude/projects``, ``~/.codex/sessions``, ``~/.gemini/tmp`` or any folder:
every file that could be a session (``.jsonl``, ``.json``, ``.af``, aider's and SpecStory's
Markdown) gets a row — one per session when a session is several files (a Cline task, OpenCode's
storage) — with the format detected, its models, requests, tool calls, the conversation's size,
what the provider billed, its own compactions, what was skipped or repaired — or, when it does
not load, the reason in ``problem``. Files are read in parallel processes when there are many (parsing JSON holds the
interpreter lock), with a progress bar.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import CtxlabError, UsageError
from ctxlab.io._load import read
from ctxlab.io._places import companion
from ctxlab.io._specstory import is_specstory
from ctxlab.messages import AssistantMessage
from ctxlab.tokens import ApproximateCounter, TokenCache

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SESSION_COLUMNS", "sessions"]

SESSION_COLUMNS = (
    "path",
    "name",
    "format",
    "models",
    "started",
    "modified",
    "messages",
    "requests",
    "tool_calls",
    "conversation_tokens",
    "billed_input_tokens",
    "recorded_compactions",
    "skipped",
    "repairs",
    "problem",
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
)
SUFFIXES = (".jsonl", ".json", ".traj", ".eval", ".af", ".md")
"""The files `sessions` reads."""
_PARALLEL_FROM = 24  # files: below this, starting processes costs more than it saves


def sessions(
    folder: str | os.PathLike[str],
    *,
    suffixes: Iterable[str] = SUFFIXES,
    workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every session file under ``folder`` (recursively), one row each (`SESSION_COLUMNS`).

    ``conversation_tokens`` is the final conversation's size, estimated (about 4 characters a
    token); ``billed_input_tokens`` the input the provider billed over all requests, where the
    file records usage. A file that does not load has its reason in ``problem``: nothing in the
    folder is left out. Open a row with ``ctxlab.load(row.path)`` or ``Lab.open(row, ...)``;
    ``sweep`` takes the frame's ``path`` column.

    Args:
        folder: The folder to read.
        suffixes: The file endings that may hold a session.
        workers: Processes to read with (default: the CPU count; 1 reads in this process).
        progress: Show a ``tqdm.auto`` progress bar.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    root = Path(folder).expanduser()
    if not root.is_dir():
        msg = f"{str(root)!r} is not a folder; give a folder of session files"
        raise UsageError(msg)
    wanted = tuple(s.lower() for s in suffixes)
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.name.lower().endswith(wanted)
        and not _hidden(p, root)
        and not companion(p)  # a part of a session listed under another of its files
        and _session_markdown(p)
    )
    count = workers if workers is not None else os.cpu_count() or 1
    bar = tqdm(total=len(files), disable=not progress, unit="file")
    rows: list[dict[str, Any]] = []
    if count > 1 and len(files) >= _PARALLEL_FROM:
        with ProcessPoolExecutor(max_workers=count) as pool:
            for row in pool.map(session_row, files, chunksize=8):
                rows.append(row)
                bar.update()
    else:
        for path in files:
            rows.append(session_row(path))
            bar.update()
    bar.close()
    frame = pd.DataFrame(rows, columns=list(SESSION_COLUMNS))
    # Counts as integers with gaps (a file that did not load has none), not floats.
    return frame.astype(dict.fromkeys(_COUNTS, "Int64"))


def _session_markdown(path: Path) -> bool:
    # Of Markdown files, only chat histories (aider's, SpecStory's): not every README.
    if not path.name.lower().endswith(".md"):
        return True
    if path.name.lower().endswith(".aider.chat.history.md"):
        return True
    try:
        with path.open("rb") as handle:
            return is_specstory(handle.read(2048).decode("utf-8", "replace"))
    except OSError:
        return False


def _hidden(path: Path, root: Path) -> bool:
    # Hidden folders below the root (a .git, a cache) hold no sessions.
    return any(part.startswith(".") for part in path.relative_to(root).parts[:-1])


def session_row(path: Path) -> dict[str, Any]:
    """The row of one file (`SESSION_COLUMNS`); a file that does not load has ``problem``."""
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    row: dict[str, Any] = dict.fromkeys(SESSION_COLUMNS)
    row.update(path=str(path), name=path.stem, modified=modified)
    try:
        transcript = read(path)
    except CtxlabError as exc:
        row["problem"] = str(exc)
        return row
    except (OSError, RecursionError, MemoryError) as exc:
        row["problem"] = f"{type(exc).__name__}: {exc}"
        return row
    meta = transcript.meta
    cache = TokenCache(ApproximateCounter())
    row.update(
        name=transcript.name,
        format=meta.get("source"),
        models=", ".join(str(m) for m in meta.get("models") or ()) or None,
        started=meta.get("startTime") or meta.get("started"),
        messages=len(transcript.messages),
        requests=sum(isinstance(m, AssistantMessage) for m in transcript.messages),
        tool_calls=sum(len(getattr(m, "tool_uses", ())) for m in transcript.messages),
        conversation_tokens=cache.messages(transcript.messages),
        billed_input_tokens=sum(u.total_input_tokens for u in transcript.usage.values())
        if transcript.usage
        else None,
        recorded_compactions=len(meta.get("compactions") or ()),
        skipped=sum((meta.get("skipped") or {}).values()),
        repairs=len(meta.get("repairs") or ()),
    )
    return row
