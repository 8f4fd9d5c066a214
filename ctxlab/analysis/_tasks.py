"""`run_tasks`: independent tasks, each returning rows, run in this process, on any
``concurrent.futures.Executor`` or on a Dask cluster — the machinery sweeps (`ctxlab.sweep`)
and forks run forward on workers (`ctxlab.fork.run_forward`) share.

A task that raises on its worker, or cannot finish (its executor broke, the cluster closed), is
the rows ``lost`` makes of it, never a lost run. Progress is a ``tqdm.auto`` bar; interrupting
(Ctrl-C, the notebook's stop button) cancels what is pending and returns what finished.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, as_completed
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

__all__ = ["Row", "Task", "checked_executor", "is_dask", "run_tasks"]

Row = dict[str, Any]
Task = tuple[Callable[..., list[Any]], tuple[Any, ...], int]
"""A function, its arguments, and how many rows it returns (for the progress bar)."""


def is_dask(executor: Any) -> bool:
    """Whether ``executor`` is a ``dask.distributed.Client``."""
    return hasattr(executor, "scatter") and hasattr(executor, "get_executor")


def checked_executor(executor: object) -> None:
    """`UsageError` unless ``executor`` is None, a ``concurrent.futures.Executor`` or a
    ``dask.distributed.Client`` (checked before any work, not at the first submit)."""
    if executor is not None and not (is_dask(executor) or isinstance(executor, Executor)):
        msg = (
            "executor must be None, a concurrent.futures.Executor or a dask.distributed.Client, "
            f"got {shown(executor)}"
        )
        raise UsageError(msg)


def run_tasks(
    tasks: Sequence[Task],
    executor: Any,
    *,
    progress: bool,
    unit: str,
    finished: Callable[[list[Any]], None],
    lost: Callable[[int, BaseException], list[Any]],
) -> tuple[list[Any], bool]:
    """Run ``tasks`` (in order in this process when ``executor`` is None) and return every
    row and whether the run was interrupted. ``finished`` sees each task's rows as they
    arrive; ``lost(index, error)`` makes the rows of a task that could not finish."""
    rows: list[Any] = []
    bar = _bar(sum(t[2] for t in tasks), progress, unit)
    try:
        if executor is None:
            for function, arguments, _ in tasks:
                done = function(*arguments)
                rows.extend(done)
                finished(done)
                bar.update(len(done))
            return rows, False
        futures = _submit(executor, tasks)
        index_of = {id(future): index for index, future in enumerate(futures)}
        completed: Any = as_completed
        if is_dask(executor):
            import distributed  # Dask futures are not the standard library's

            completed = distributed.as_completed
        seen: set[int] = set()
        try:
            for future in completed(futures):
                seen.add(id(future))
                try:
                    done = future.result()
                except Exception as exc:  # a lost task is rows, never a lost run
                    done = lost(index_of[id(future)], exc)
                rows.extend(done)
                finished(done)
                bar.update(len(done))
        except KeyboardInterrupt:
            # Keep every task that had finished, cancel the rest.
            for future in futures:
                if id(future) in seen or not future.done():
                    future.cancel()
                    continue
                with contextlib.suppress(BaseException):  # a stopped task is not returned
                    rows.extend(future.result())
            return rows, True
        return rows, False
    except KeyboardInterrupt:
        return rows, True
    finally:
        bar.close()


class _NoBar:
    def update(self, n: int) -> None:
        return None

    def close(self) -> None:
        return None


def _bar(total: int, shown: bool, unit: str) -> Any:
    if not shown:
        return _NoBar()  # tqdm only when asked: in a notebook tqdm.auto imports ipywidgets
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit)


def _submit(executor: Any, tasks: Sequence[Task]) -> list[Any]:
    if is_dask(executor):
        with warnings.catch_warnings():
            # A task carries its data on purpose (a scattered value dies with its worker and
            # has no lineage to rebuild it from); Dask warns about graphs over 10 MB.
            warnings.filterwarnings("ignore", message=".*large graph", category=UserWarning)
            return [executor.submit(f, *a, pure=False) for f, a, _ in tasks]
    return [executor.submit(f, *a) for f, a, _ in tasks]
