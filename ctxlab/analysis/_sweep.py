"""`sweep`: many sessions × many configs × windows, in-process, on any
``concurrent.futures.Executor``, or on a Dask cluster — one row per case.

Work is grouped by session: one task replays every config at every window of that session
with one shared token cache, so a session is tokenized once and travels to a worker once (on
Dask it is scattered to the cluster). A case that raises is a row with its error, never a lost
sweep. Finished groups are written to a Parquet cache keyed by the session's content, the
config and ctxlab's version: a second sweep computes only new cases. Progress is a ``tqdm.auto``
bar; interrupting (Ctrl-C, the notebook's stop button) cancels what is pending and returns what
finished, with ``frame.attrs["interrupted"] = True``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab._version import __version__
from ctxlab.analysis._cost import CacheRules, Price
from ctxlab.analysis._sync import run_sync
from ctxlab.analysis._whatif import COMPARISON_COLUMNS, WhatIf
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from ctxlab.messages import dump_messages
from ctxlab.tokens import TiktokenCounter, TokenCache

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SWEEP_COLUMNS", "sweep"]

SWEEP_COLUMNS = ("session", "config", "window", *COMPARISON_COLUMNS, "error")
"""The columns of a sweep's frame, in order."""

Case = tuple[str, str, int]

# Counts stay integers (nullable: an error row has none).
_INTEGERS = dict.fromkeys(
    ("window", "requests", "tokens_sent", "compactions", "peak", "errors"), "Int64"
)


def _version() -> str:
    return __version__


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def transcript_key(transcript: Transcript) -> str:
    """A hash of what a replay depends on: system, tools and messages."""
    tools = [(t.name, t.description, t.input_schema) for t in transcript.tools]
    return _digest(f"{transcript.system}|{tools}|{dump_messages(transcript.messages)}")


FIGURES = "retention-measured-1"
"""What the cached figures mean: bumped when a figure's definition changes within a version
(retention measured on the original messages; cost against the feasible baseline), so that a
cache never serves figures of another definition."""


def _case_key(session_key: str, config: ContextConfig, window: int, extra: str) -> str:
    key = f"{session_key}|{config.model_dump_json()}|{window}|{_version()}|{FIGURES}|{extra}"
    return _digest(key)


def run_group(
    transcript: Transcript,
    windows: Sequence[int] | int,
    configs: Mapping[str, ContextConfig],
    price: Price | None,
    rules: CacheRules | None,
    summary_calls: bool,
) -> list[dict[str, Any]]:
    """Every config of one session at each window: the rows of the sweep (run on a worker).
    The session is tokenized once for all of them (one shared `TokenCache`)."""
    cache = TokenCache(TiktokenCounter())
    rows: list[dict[str, Any]] = []
    for window in [windows] if isinstance(windows, int) else windows:
        what = WhatIf(
            transcript,
            configs,
            context_window=window,
            counter=cache,
            price=price,
            rules=rules,
            summary_calls=summary_calls,
        )
        failures: dict[str, str] = {}
        for name in configs:
            try:
                run_sync(what.run(name))
            except Exception as exc:  # a failing case is a row, never a lost sweep
                failures[name] = f"{type(exc).__name__}: {exc}"
        table = what.table()
        for name in configs:
            base = {"session": transcript.name, "config": name, "window": window}
            if name in failures:
                rows.append({**base, "error": failures[name]})
                continue
            row = table.loc[name]
            values = {c: _plain(row[c]) for c in COMPARISON_COLUMNS}
            rows.append({**base, **values, "error": None})
    return rows


def _plain(value: Any) -> Any:
    # numpy scalars as Python numbers: identical frames whichever process made them.
    return value.item() if hasattr(value, "item") else value


def _load(items: Iterable[Transcript | str | os.PathLike[str]]) -> list[Transcript]:
    out: list[Transcript] = []
    names: set[str] = set()
    for item in items:
        transcript = item if isinstance(item, Transcript) else load(item)
        name, number = transcript.name, 1
        while name in names:  # the frame is keyed by session name
            number += 1
            name = f"{transcript.name}#{number}"
        names.add(name)
        if name != transcript.name:
            transcript = Transcript(
                name,
                transcript.meta,
                transcript.system,
                transcript.messages,
                transcript.extra,
                transcript.tools,
                transcript.usage,
            )
        out.append(transcript)
    return out


def sweep(
    transcripts: Iterable[Transcript | str | os.PathLike[str]],
    configs: Mapping[str, ContextConfig],
    windows: Sequence[int] = (32_000,),
    *,
    cases: Iterable[Case] | None = None,
    executor: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    price: Price | None = None,
    rules: CacheRules | None = None,
    summary_calls: bool = True,
) -> pd.DataFrame:
    """Replay every (session, config, window) — the cartesian product, or the explicit
    ``cases`` — and return one row per case (`SWEEP_COLUMNS`; see `ctxlab.WhatIf` for what each
    figure means).

    Args:
        transcripts: `Transcript` objects or paths `ctxlab.load` reads, or the frame of
            `ctxlab.sessions` (its files that loaded: a row with a ``problem`` is left out).
        configs: Config name → `ContextConfig`.
        windows: Context windows to replay at.
        cases: Explicit ``(session name, config name, window)`` triples instead of the product.
        executor: None (in this process), a ``concurrent.futures.Executor``, or a
            ``dask.distributed.Client`` (a ``LocalCluster`` or a scheduler's address).
        cache_dir: A folder for the Parquet cache of finished cases (none when omitted).
        progress: Show a ``tqdm.auto`` progress bar.
        price: The model's prices (the cost model of `WhatIf`).
        rules: The provider's prompt-cache rules (see `WhatIf`).
        summary_calls: Price the summary calls too (see `WhatIf`).
    """
    import pandas as pd

    if hasattr(transcripts, "columns") and "path" in transcripts.columns:  # a sessions() frame
        listing: Any = transcripts
        ok = listing["problem"].isna() if "problem" in listing.columns else [True] * len(listing)
        transcripts = [p for p, fine in zip(listing["path"], ok, strict=True) if fine]
    sessions = {t.name: t for t in _load(transcripts)}
    if not configs or not sessions:
        msg = "sweep needs at least one session and one named config"
        raise UsageError(msg)
    wanted = (
        list(cases)
        if cases is not None
        else [(s, c, w) for s in sessions for c in configs for w in windows]
    )
    unknown = [c for c in wanted if c[0] not in sessions or c[1] not in configs]
    if unknown:
        msg = f"cases name unknown sessions or configs: {unknown[:3]}"
        raise UsageError(msg)
    extra = f"{price}|{rules}|{summary_calls}"
    cache = _Cache(Path(cache_dir), extra) if cache_dir is not None else None
    keys = {name: transcript_key(t) for name, t in sessions.items()} if cache else {}
    rows: list[dict[str, Any]] = []
    pending: dict[tuple[str, int], dict[str, ContextConfig]] = {}
    for session, config, window in wanted:
        found = cache.get(keys[session], configs[config], window) if cache else None
        if found is not None:
            rows.append({**found, "session": session, "config": config, "window": window})
        else:
            pending.setdefault((session, window), {})[config] = configs[config]
    computed, interrupted = _compute(
        sessions, _by_session(pending), executor, progress, (price, rules, summary_calls)
    )
    for row in computed:
        if cache is not None and row.get("error") is None:
            cache.put(keys[row["session"]], configs[row["config"]], row["window"], row)
    rows.extend(computed)
    order = {case: n for n, case in enumerate(wanted)}
    rows.sort(key=lambda r: order.get((r["session"], r["config"], r["window"]), len(order)))
    frame = pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)).astype(_INTEGERS)
    frame.attrs.update(computed=len(computed), cached=len(rows) - len(computed))
    frame.attrs["interrupted"] = interrupted
    return frame


Group = tuple[str, tuple[int, ...], dict[str, ContextConfig]]


def _by_session(pending: Mapping[tuple[str, int], dict[str, ContextConfig]]) -> list[Group]:
    """The windows of one session that need the same configs, in one task (one tokenization)."""
    merged: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    chosen: dict[tuple[str, tuple[str, ...]], dict[str, ContextConfig]] = {}
    for (session, window), configs in pending.items():
        key = (session, tuple(configs))
        merged.setdefault(key, []).append(window)
        chosen[key] = configs
    return [(s, tuple(merged[(s, c)]), chosen[(s, c)]) for s, c in merged]


def _compute(
    sessions: Mapping[str, Transcript],
    groups: list[Group],
    executor: Any,
    progress: bool,
    model: tuple[Price | None, CacheRules | None, bool],
) -> tuple[list[dict[str, Any]], bool]:
    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    bar = tqdm(total=sum(len(w) * len(c) for _, w, c in groups), disable=not progress, unit="case")
    try:
        if executor is None:
            for session, windows, configs in groups:
                done = run_group(sessions[session], windows, configs, *model)
                rows.extend(done)
                bar.update(len(done))
            return rows, False
        futures = _submit(executor, sessions, groups, model)
        completed: Any = as_completed
        if _is_dask(executor):
            import distributed  # Dask futures are not the standard library's

            completed = distributed.as_completed
        seen: set[int] = set()
        try:
            for future in completed(futures):
                seen.add(id(future))
                done = future.result()
                rows.extend(done)
                bar.update(len(done))
        except KeyboardInterrupt:
            # Keep every group that had finished, cancel the rest.
            for future in futures:
                if id(future) in seen or not future.done():
                    future.cancel()
                    continue
                with contextlib.suppress(BaseException):  # a stopped group is not returned
                    rows.extend(future.result())
            return rows, True
        return rows, False
    except KeyboardInterrupt:
        return rows, True
    finally:
        bar.close()


def _is_dask(executor: Any) -> bool:
    return hasattr(executor, "scatter") and hasattr(executor, "get_executor")


def _submit(
    executor: Any,
    sessions: Mapping[str, Transcript],
    groups: list[Group],
    model: tuple[Price | None, CacheRules | None, bool],
) -> list[Future[list[dict[str, Any]]]]:
    # The longest sessions first: the last tasks to finish are short ones, so workers stay busy
    # to the end instead of one of them finishing a long session alone.
    groups = sorted(groups, key=lambda g: -len(sessions[g[0]].messages) * len(g[1]) * len(g[2]))
    if _is_dask(executor):
        # A Dask client: each session goes to the cluster once; tasks refer to it.
        used = sorted({s for s, _, _ in groups})
        scattered = executor.scatter([sessions[s] for s in used], hash=False)
        refs: dict[str, Any] = dict(zip(used, scattered, strict=True))
        return [executor.submit(run_group, refs[s], w, c, *model, pure=False) for s, w, c in groups]
    if not isinstance(executor, Executor):
        msg = "executor must be None, a concurrent.futures.Executor or a dask.distributed.Client"
        raise UsageError(msg)
    return [executor.submit(run_group, sessions[s], w, c, *model) for s, w, c in groups]


class _Cache:
    """One Parquet file per finished case, named by its key."""

    def __init__(self, folder: Path, extra: str) -> None:
        try:
            import pyarrow  # noqa: F401 - pandas writes Parquet through it
        except ImportError as exc:
            msg = "cache_dir= needs pyarrow for its Parquet files: pip install 'ctxlab[sweep]'"
            raise UsageError(msg) from exc
        self.folder = folder
        self.extra = extra
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, session: str, config: ContextConfig, window: int) -> Path:
        return self.folder / f"{_case_key(session, config, window, self.extra)}.parquet"

    def get(self, session: str, config: ContextConfig, window: int) -> dict[str, Any] | None:
        import pandas as pd

        path = self._path(session, config, window)
        if not path.exists():
            return None
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError):
            return None  # a damaged entry is computed again
        return {str(k): v for k, v in frame.iloc[0].to_dict().items()} if len(frame) else None

    def put(self, session: str, config: ContextConfig, window: int, row: Mapping[str, Any]) -> None:
        import pandas as pd

        path = self._path(session, config, window)
        partial = path.with_suffix(".partial")
        pd.DataFrame([dict(row)], columns=list(SWEEP_COLUMNS)).to_parquet(partial)
        partial.replace(path)  # never a half-written entry under the real name
