"""Running a coroutine from synchronous code, also where an event loop is already running in
this thread (a notebook cell calling synchronous framework code)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result: run here when no loop runs in this thread, else on a thread of
    its own (a running loop cannot be re-entered)."""
    box: list[T] = []

    async def main() -> None:
        # The loop's own task returns nothing: Python 3.11's asyncio.run formats its SIGINT
        # handler with repr, the task's result included, each time it runs.
        box.append(await coroutine)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return box[0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, main()).result()
    return box[0]
