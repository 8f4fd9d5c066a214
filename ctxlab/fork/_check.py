"""The outcome check of a run, given a time limit and kept off the event loop.

A check is the caller's code — often the project's own tests, in a subprocess — and may never
answer. An ``async`` check runs on the loop and is cancelled at the limit. Any other runs on a
thread of its own, so that it cannot block the loop (the other runs, a cancellation): at the
limit it is left to finish on its own — a thread cannot be stopped from outside — as a daemon,
which never keeps Python from exiting, and what it says then is ignored. Either way the run's
verdict is unknown (``passed`` None) and a note says why; the other runs go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import ForkError
from ctxlab.util._checks import finite, shown

if TYPE_CHECKING:
    from ctxlab.fork._branch import BranchRun

__all__ = ["CHECK_TIMEOUT", "Check", "checked_timeout", "judge"]

Check = Callable[["BranchRun"], bool | Awaitable[bool]]
"""The outcome check: given a finished run (its ``workspace``, ``reply``, ``agent``), whether
the task is done — e.g. the project's tests pass in the run's workspace."""

CHECK_TIMEOUT = 600.0
"""Seconds a check may take by default (`run_forward`'s ``check_timeout``): room for a
project's whole test suite, not for a check that never answers."""


def checked_timeout(value: object) -> float | None:
    """``value`` as a check's time limit in seconds (None: none); `ForkError` otherwise."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not finite(value)
        or value <= 0
    ):
        msg = (
            f"check_timeout must be a number of seconds above 0 (or None for no limit), got "
            f"{shown(value)}"
        )
        raise ForkError(msg)
    return float(value)


async def judge(run: BranchRun, check: Check, timeout: float | None) -> None:
    """Run ``check`` on ``run`` within ``timeout`` seconds; its verdict in ``run.passed``, or
    a note on the run when it raised or gave none in time."""
    limit = asyncio.timeout(timeout)
    try:
        async with limit:
            if _is_async(check):
                verdict = await check(run)  # type: ignore[misc]
            else:
                verdict = await _in_thread(check, run)
                if inspect.isawaitable(verdict):  # a plain function returning a coroutine
                    verdict = await verdict
        run.passed = bool(verdict)
    except Exception as exc:
        if limit.expired():  # not a TimeoutError of the check's own
            run.notes.append(
                f"the check gave no verdict within {timeout:g} s (check_timeout): its verdict "
                "is unknown"
            )
        else:
            run.notes.append(f"the check raised {type(exc).__name__}: {exc}")


def _is_async(check: Any) -> bool:
    return inspect.iscoroutinefunction(check) or inspect.iscoroutinefunction(
        getattr(check, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    )


def _in_thread(function: Callable[..., Any], *arguments: Any) -> asyncio.Future[Any]:
    """``function(*arguments)`` on a daemon thread: a future of the loop, settled when it
    returns (and left alone when no one waits any more)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():  # cancelled at the limit: its answer is ignored
            future.set_result(value) if ok else future.set_exception(value)

    def target() -> None:
        try:
            outcome = (True, function(*arguments))
        except Exception as exc:
            outcome = (False, exc)
        except BaseException as exc:  # SystemExit in a thread: said, never raised on the loop
            outcome = (False, RuntimeError(f"{type(exc).__name__} {exc}".strip()))
        with contextlib.suppress(RuntimeError):  # the loop closed: no one waits for this
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name="ctxlab-fork-check", daemon=True).start()
    return future
