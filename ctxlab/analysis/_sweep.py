"""`sweep`: many sessions × many configs × windows, in-process, on any
``concurrent.futures.Executor``, or on a Dask cluster — one row per case.

Work is grouped by session: one task replays every config at every window of that session
with one shared token cache, so a session is tokenized once and travels to a worker once. The
session travels *with* its task (not as a scattered future): a task whose worker dies is run
again on another worker by Dask, from its own content. A case that raises is a row with its
error, never a lost sweep; a task that cannot finish (its executor broke, the cluster closed)
makes a row with that error for each of its cases, and the sweep returns.

Each finished task's cases are written to the Parquet cache as they arrive (one file per case,
written atomically under a unique temporary name, carrying the key it was computed for, checked
on read), keyed by the session's content, the config, the window and ctxlab's version: a second
sweep computes only what is not there. A cache that cannot be written (a full disk, a folder
where an entry goes, a read-only count store) loses nothing: every computed row is returned,
with a `CacheNotWritten` warning and ``frame.attrs["cache_problems"]`` saying why. Progress is a ``tqdm.auto`` bar; interrupting (Ctrl-C,
the notebook's stop button) cancels what is pending and returns what finished, with
``frame.attrs["interrupted"] = True``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._cache_rules import checked_rules
from ctxlab.analysis._cost import (
    CacheRules,
    Price,
    checked_price,
)
from ctxlab.analysis._model_summaries import ModelSummaries
from ctxlab.analysis._prices import recorded_model
from ctxlab.analysis._summarizer_cap import sweep_summaries

# COUNTS_FILE is named here too, where `sweep` documents it.
from ctxlab.analysis._sweep_cache import COUNTS_FILE as COUNTS_FILE
from ctxlab.analysis._sweep_cache import (
    SWEEP_COLUMNS,
    SweepCache,
    cached_rows,
    opened_cache,
    transcript_key,
)
from ctxlab.analysis._sweep_cases import Case, sweep_sessions, wanted_cases
from ctxlab.analysis._sync import run_sync
from ctxlab.analysis._tasks import Task, checked_executor, run_tasks
from ctxlab.analysis._unrecorded import checked_unrecorded_tokens
from ctxlab.analysis._verdict import say_pricing, sweep_findings
from ctxlab.analysis._whatif import COMPARISON_COLUMNS, WhatIf
from ctxlab.config._config import ContextConfig, named_configs, require_config
from ctxlab.exceptions import CacheNotWritten, CountStoreError, UsageError, WriteError
from ctxlab.io._transcript import Transcript
from ctxlab.models import Model
from ctxlab.tokens import CountStore, TokenCache, counter_for
from ctxlab.util._checks import windows_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SWEEP_COLUMNS", "sweep"]


# Counts stay integers (nullable: an error row has none).
_INTEGERS = dict.fromkeys(
    (
        "window",
        "requests",
        "tokens_sent",
        "compactions",
        "peak",
        "errors",
        "failed_at",
        "over_limit_billed",
    ),
    "Int64",
)


def run_group(
    transcript: Transcript,
    windows: Sequence[int] | int,
    configs: Mapping[str, ContextConfig],
    price: Price | None,
    rules: CacheRules | None,
    summary_calls: bool,
    counts: str | None = None,
    unrecorded_tokens: int | str | None = None,
    summaries: ModelSummaries | None = None,
) -> list[dict[str, Any]]:
    """Every config of one session at each window: the rows of the sweep (run on a worker).
    The session is tokenized once for all of them (one shared `TokenCache`) — and, with
    ``counts`` (a `CountStore` file), once across sweeps. ``summaries``: the user's model
    writing the summaries, one budget for the whole sweep (in this process)."""
    store, problem = _open_store(counts)
    cache = TokenCache(counter_for(recorded_model(transcript.meta)), store=store)
    rows: list[dict[str, Any]] = []
    invalid = _invalid_configs(configs)
    valid = {name: config for name, config in configs.items() if name not in invalid}
    for window in [windows] if isinstance(windows, int) else windows:
        failures = dict(invalid)
        table = None
        if valid:
            what = WhatIf(
                transcript,
                valid,
                context_window=window,
                counter=cache,
                price=price,
                rules=rules,
                summary_calls=summary_calls,
                unrecorded_tokens=unrecorded_tokens,
                summarizer=summaries,
            )
            table = _run_all(what, valid, failures)
        rows.extend(_window_rows(transcript.name, window, configs, failures, table))
    problem = problem or cache.store_problem
    if store is not None:
        store.close()
    if problem:
        # Beside the row's columns: the sweep says it once, the row's figures are whole.
        for done in rows:
            done[_PROBLEM] = problem
    return rows


def _invalid_configs(configs: Mapping[str, ContextConfig]) -> dict[str, str]:
    """The error of each config that is invalid, by name."""
    # An invalid config is its rows' error before any replay: the what-if's baseline is its
    # first config's, so left in, it would cost the other configs their figures too.
    invalid: dict[str, str] = {}
    for name, config in configs.items():
        try:
            require_config(config)
        except UsageError as exc:
            invalid[name] = f"{type(exc).__name__}: {exc}"
    return invalid


def _run_all(what: WhatIf, names: Iterable[str], failures: dict[str, str]) -> pd.DataFrame:
    """Run every config ``names`` of ``what``, adding each one's error to ``failures``; return
    the what-if's table."""
    for name in names:
        try:
            run_sync(what.run(name))
        except Exception as exc:  # a failing case is a row, never a lost sweep
            failures[name] = f"{type(exc).__name__}: {exc}"
    return what.table()


def _window_rows(
    session: str,
    window: int,
    configs: Iterable[str],
    failures: Mapping[str, str],
    table: pd.DataFrame | None,
) -> list[dict[str, Any]]:
    """The rows of one window: each config's figures from ``table``, or its error."""
    rows: list[dict[str, Any]] = []
    for name in configs:
        base = {"session": session, "config": name, "window": window}
        if name in failures or table is None:
            rows.append({**base, "error": failures[name]})
            continue
        # Cell by cell: a row read whole takes one dtype for all, and NaN becomes NA.
        values = {c: _plain(table.at[name, c]) for c in COMPARISON_COLUMNS}
        rows.append({**base, **values, "error": None})
    return rows


_PROBLEM = "cache_problem"
"""The key a worker's rows carry when its count store could not be used: not a column."""


def _open_store(counts: str | None) -> tuple[CountStore | None, str | None]:
    """The sweep's count store, or None and why: a worker counts without it rather than fail."""
    if not counts:
        return None, None
    try:
        return CountStore(counts), None
    except CountStoreError as exc:
        return None, str(exc)


def _plain(value: Any) -> Any:
    # numpy scalars as Python numbers, pandas' NA as None: identical frames whichever process
    # made them. (pandas is imported where a frame is made, as everywhere in the engine.)
    import pandas as pd

    if value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value


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
    unrecorded_tokens: int | str | None = None,
    summarizer: Model | None = None,
    budget_usd: float | None = None,
) -> pd.DataFrame:
    """Replay every (session, config, window) — the cartesian product, or the explicit
    ``cases`` — and return one row per case (`SWEEP_COLUMNS`; see `ctxlab.WhatIf` for what each
    figure means). ``frame.attrs["findings"]`` says, a sentence per window, whether any config
    costs less than the feasible baseline over the sessions (`sweep_findings`).

    Args:
        transcripts: `Transcript` objects or paths `ctxlab.load` reads, or the frame of
            `ctxlab.sessions` (its files that loaded: a row with a ``problem`` is left out).
        configs: Config name → `ContextConfig`.
        windows: Context windows to replay at.
        cases: Explicit ``(session name, config name, window)`` triples instead of the product.
        executor: None (in this process), a ``concurrent.futures.Executor``, or a
            ``dask.distributed.Client`` (a ``LocalCluster`` or a scheduler's address).
        cache_dir: A folder for the Parquet cache of finished cases, and the sessions' token
            counts (`CountStore`, `COUNTS_FILE`): none when omitted.
        progress: Show a ``tqdm.auto`` progress bar.
        price: The model's prices (the cost model of `WhatIf`).
        rules: The provider's prompt-cache rules (see `WhatIf`).
        summary_calls: Price the summary calls too (see `WhatIf`).
        unrecorded_tokens: What each recorded request held that its file does not, for the
            sessions whose files carry no usage to size it from: tokens a request or a harness
            profile (``"claude_code"``); see `WhatIf`. None: sized from each session's bill
            where it has one; a session with neither has figures that exclude it.
        summarizer: Your `Model` to write the summaries (see `WhatIf`); the sweep then runs
            in this process (``executor`` None: one budget for every session).
        budget_usd: A cap in USD on the summarizer's calls over the whole sweep. Each
            session's summaries are estimated (`WhatIf`) against what remains of the cap before
            its first call: a session over it is refused (its rows' error: `OverBudget`), the
            others go on; once the cap is reached no call is sent.
    """
    # Long by its public docstring (every argument's meaning); the body checks the arguments
    # in order, then takes what the cache holds, computes the rest and makes the frame.
    windows = windows_of(windows)
    configs = named_configs(configs, validate=False)
    checked_price(price)
    checked_rules(rules)
    checked_unrecorded_tokens(unrecorded_tokens)
    checked_executor(executor)
    summaries = sweep_summaries(summarizer, budget_usd, executor)
    # A summarizer model's summaries are not the offline extract's: cached apart.
    by = "" if summaries is None else f"|summaries by {summaries.name}"
    extra = f"{price}|{rules}|{summary_calls}|{unrecorded_tokens}{by}"
    folder, cache, counts = opened_cache(cache_dir, extra)
    sessions = {t.name: t for t in sweep_sessions(transcripts)}
    wanted = wanted_cases(sessions, configs, windows, cases)
    keys = {name: transcript_key(t) for name, t in sessions.items()} if cache else {}
    rows, pending = cached_rows(wanted, cache, keys, configs)
    problems: dict[str, None] = {}  # each problem once, in the order met
    finished = _writer(cache, keys, configs, problems)
    # The sessions' token counts are kept beside the cached cases: a sweep of other configs
    # over the same sessions tokenizes nothing again.
    model = (price, rules, summary_calls, counts, unrecorded_tokens, summaries)
    computed, interrupted = _compute(
        sessions, _by_session(pending), executor, progress, model, finished
    )
    rows.extend(computed)
    frame = _frame(rows, wanted, len(computed), interrupted)
    say_pricing(frame, sessions, price, rules)
    frame.attrs["cache_problems"] = list(problems)
    if problems:
        _warn_unwritten(problems, folder)
    return frame


def _writer(
    cache: SweepCache | None,
    keys: Mapping[str, str],
    configs: Mapping[str, ContextConfig],
    problems: dict[str, None],
) -> Callable[[list[dict[str, Any]]], None]:
    """What takes each finished task's rows: caches them, adding what it meets to ``problems``."""

    def finished(done: list[dict[str, Any]]) -> None:
        # Cached as each task arrives: a sweep that stops later keeps what finished. A cache
        # that cannot be written costs the cache, never a computed row.
        for row in done:
            problem = row.pop(_PROBLEM, None)
            if problem:
                problems[problem] = None
            if cache is not None and row.get("error") is None:
                try:
                    cache.put(keys[row["session"]], configs[row["config"]], row["window"], row)
                except (WriteError, OSError) as exc:
                    problems[str(exc)] = None

    return finished


def _frame(
    rows: list[dict[str, Any]],
    wanted: Sequence[Case],
    computed: int,
    interrupted: bool,
) -> pd.DataFrame:
    """The sweep's frame: the rows in the order of the cases wanted, with what it found."""
    import pandas as pd

    order = {case: n for n, case in enumerate(wanted)}
    rows.sort(key=lambda r: order.get((r["session"], r["config"], r["window"]), len(order)))
    frame = pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)).astype(_INTEGERS)
    frame.attrs.update(computed=computed, cached=len(rows) - computed)
    frame.attrs["interrupted"] = interrupted
    frame.attrs["findings"] = sweep_findings(frame)
    return frame


def _warn_unwritten(problems: Mapping[str, None], folder: Path | None) -> None:
    """Warn (`CacheNotWritten`, at `sweep`'s caller) that the cache was not fully written."""
    first = next(iter(problems))
    msg = (
        f"the sweep's cache in {str(folder)!r} was not fully written ({len(problems)} "
        f"problem(s); frame.attrs['cache_problems'] lists them): {first}. Every computed row "
        "is returned; a later sweep computes the missing entries again"
    )
    warnings.warn(msg, CacheNotWritten, stacklevel=3)


Group = tuple[str, tuple[int, ...], dict[str, ContextConfig]]


def _lost(group: Group, exc: BaseException) -> list[dict[str, Any]]:
    """The rows of a task that could not finish (its worker or executor is gone)."""
    session, windows, configs = group
    error = (
        f"not computed: {type(exc).__name__}: {exc} (the worker or cluster running it was "
        "lost; sweep again — the finished cases are cached when cache_dir is given)"
    )
    return [
        {"session": session, "config": name, "window": window, "error": error}
        for window in windows
        for name in configs
    ]


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
    model: tuple[
        Price | None, CacheRules | None, bool, str | None, int | str | None, ModelSummaries | None
    ],
    finished: Callable[[list[dict[str, Any]]], None],
) -> tuple[list[dict[str, Any]], bool]:
    if executor is not None:
        # The longest sessions first: the last tasks to finish are short ones, so workers stay
        # busy to the end instead of one of them finishing a long session alone. (The session
        # travels in its task: see the module's documentation.)
        groups = sorted(groups, key=lambda g: -len(sessions[g[0]].messages) * len(g[1]) * len(g[2]))
    tasks: list[Task] = [
        (run_group, (sessions[s], w, c, *model), len(w) * len(c)) for s, w, c in groups
    ]
    return run_tasks(
        tasks,
        executor,
        progress=progress,
        unit="case",
        finished=finished,
        lost=lambda index, exc: _lost(groups[index], exc),
    )
