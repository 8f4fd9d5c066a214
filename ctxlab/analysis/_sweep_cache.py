"""The sweep's Parquet cache: one file per finished case, named by the hash of what its figures
depend on (the session's content, the config, the window, ctxlab's version, the figures'
definition and the cost model), written atomically under a unique temporary name and carrying
its key and a digest of its figures, both checked on read — an entry copied over another's,
damaged (a figure whose bits changed no longer matches the digest), or holding a value of the
wrong type is computed again rather than served."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from ctxlab._version import __version__
from ctxlab.analysis._sweep_cases import Case
from ctxlab.analysis._whatif import COMPARISON_COLUMNS
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.messages import dump_messages
from ctxlab.tokens import CountStore
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument

__all__ = [
    "COUNTS_FILE",
    "SWEEP_COLUMNS",
    "SweepCache",
    "cached_rows",
    "opened_cache",
    "transcript_key",
]

SWEEP_COLUMNS = ("session", "config", "window", *COMPARISON_COLUMNS, "error")
"""The columns of a sweep's frame, in order."""

COUNTS_FILE = "token_counts.sqlite"
"""The `CountStore` a sweep keeps in its ``cache_dir``."""


def _version() -> str:
    return __version__


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def transcript_key(transcript: Transcript) -> str:
    """A hash of what a replay depends on: system, tools, messages — and the usage, which sizes
    the unrecorded part every request carries (`ctxlab.unrecorded_part`), and the times, which
    the prompt cache expires on."""
    tools = [(t.name, t.description, t.input_schema) for t in transcript.tools]
    usage = sorted(transcript.usage.items())
    times = sorted(transcript.times.items())
    messages = dump_messages(transcript.messages)
    return _digest(f"{transcript.system}|{tools}|{messages}|{usage}|{times}")


FIGURES = "unrecorded-modelled-failed-unpriced-clock-nextuse-1"
"""What the cached figures mean: bumped when a figure's definition changes within a version
(retention measured on the original messages; cost against the feasible baseline; a replay that
failed part way not priced, ``failed_at`` where it stopped; the unrecorded part in every
request, the requests over the limit by the bill; the prompt cache on the recording's clock;
next-use retention),
so that a cache never serves figures of another definition."""


def _case_key(session_key: str, config: ContextConfig, window: int, extra: str) -> str:
    # Without warnings: an invalid config (built unvalidated) is looked up too, then a row
    # with its error; its lookup must not warn about the values that make it invalid.
    dumped = config.model_dump_json(warnings=False)
    key = f"{session_key}|{dumped}|{window}|{_version()}|{FIGURES}|{extra}"
    return _digest(key)


class SweepCache:
    """One Parquet file per finished case, named by its key."""

    def __init__(self, folder: Path, extra: str) -> None:
        try:
            import pyarrow  # noqa: F401 - pandas writes Parquet through it
        except ImportError as exc:
            msg = "cache_dir= needs pyarrow for its Parquet files: pip install 'ctxlab[sweep]'"
            raise UsageError(msg) from exc
        if folder.exists() and not folder.is_dir():
            msg = f"cache_dir {str(folder)!r} is a file: give a folder (it is created if missing)"
            raise UsageError(msg)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = f"cannot create the cache folder {str(folder)!r}: {exc.strerror or exc}"
            raise UsageError(msg) from exc
        self.folder = folder
        self.extra = extra

    def _key(self, session: str, config: ContextConfig, window: int) -> str:
        return _case_key(session, config, window, self.extra)

    def get(self, session: str, config: ContextConfig, window: int) -> dict[str, Any] | None:
        """The cached figures of a case, or None: missing, unreadable, of another case (copied
        or renamed), or holding a value of the wrong type — each computed again."""
        import pandas as pd

        key = self._key(session, config, window)
        path = self.folder / f"{key}.parquet"
        if not path.is_file():
            return None
        try:
            frame = pd.read_parquet(path)
        except Exception:
            return None
        if len(frame) != 1 or list(frame.columns) != [*SWEEP_COLUMNS, "key", "digest"]:
            return None
        row = {str(k): v for k, v in frame.iloc[0].to_dict().items()}
        if row.pop("key") != key or not _valid_figures(row):
            return None
        if row.pop("digest") != figures_digest(key, row):
            return None
        return row

    def put(self, session: str, config: ContextConfig, window: int, row: Mapping[str, Any]) -> None:
        import io

        import pandas as pd

        key = self._key(session, config, window)
        buffer = io.BytesIO()
        figures = {c: row.get(c) for c in SWEEP_COLUMNS}
        entry = {**figures, "key": key, "digest": figures_digest(key, figures)}
        pd.DataFrame([entry]).to_parquet(buffer)
        # A unique temporary name, then a rename: two sweeps writing one entry never collide.
        write_atomic(self.folder / f"{key}.parquet", buffer.getvalue(), what="sweep cache entry")


def figures_digest(key: str, row: Mapping[str, Any]) -> str:
    """A digest of a case's figures (exact: floats by their hex form), checked on read."""
    parts = [key]
    for column in COMPARISON_COLUMNS:
        value = row.get(column)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            parts.append("-")
        elif isinstance(value, Real) and float(value).is_integer() and abs(float(value)) < 2**53:
            parts.append(str(int(float(value))))
        else:
            parts.append(float(value).hex())
    return _digest("|".join(parts))


def _valid_figures(row: Mapping[str, Any]) -> bool:
    """Every figure of a cached row is a number (or missing where a figure may be)."""
    for column in COMPARISON_COLUMNS:
        value = row.get(column)
        # numpy's numbers are registered as numbers.Real; its bool_ is not (Python's bool is).
        if value is not None and (isinstance(value, bool) or not isinstance(value, Real)):
            return False
    return row.get("error") is None


def opened_cache(
    cache_dir: str | os.PathLike[str] | None, extra: str
) -> tuple[Path | None, SweepCache | None, str | None]:
    """The sweep's folder, its case cache and its count store's file (each None without one),
    checked before any session is read: a wrong folder should not cost the loading."""
    folder = None
    if cache_dir is not None:
        folder = path_argument(cache_dir, "cache_dir", what="a folder for the cache")
    cache = SweepCache(Path(folder), extra) if folder else None
    counts = str(Path(folder) / COUNTS_FILE) if folder else None
    if counts:
        # Another application's file, or one damaged at its first page, is said before any
        # work (a locked one after waiting for it); each worker opens the store again.
        CountStore(counts).close()
    return folder, cache, counts


def cached_rows(
    wanted: Sequence[Case],
    cache: SweepCache | None,
    keys: Mapping[str, str],
    configs: Mapping[str, ContextConfig],
) -> tuple[list[dict[str, Any]], dict[tuple[str, int], dict[str, ContextConfig]]]:
    """The rows the cache holds, and the configs left to compute by (session, window)."""
    rows: list[dict[str, Any]] = []
    pending: dict[tuple[str, int], dict[str, ContextConfig]] = {}
    for session, config, window in wanted:
        found = cache.get(keys[session], configs[config], window) if cache else None
        if found is not None:
            rows.append({**found, "session": session, "config": config, "window": window})
        else:
            pending.setdefault((session, window), {})[config] = configs[config]
    return rows, pending
