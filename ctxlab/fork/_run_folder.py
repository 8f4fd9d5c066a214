"""A run's tools act in the run's own folder, and tell the model its paths relative to it.

A run is shown the paths of its files relative to its workspace (`RunOffloader`): what the model
is shown must not depend on the folder the run was made in (``run-1`` and ``run-10``, a
temporary folder's name, tokenize differently: two runs of a deterministic model would cost
differently). Two things follow for each of the run's tools (`in_folder`):

- **A relative path resolves in the run's workspace.** A user's tool may open the path it is
  given itself (``open(path)``), which Python resolves against the process's working folder —
  in a notebook, often the origin's project. The tool therefore runs with the working folder
  set to the run's workspace. That folder is the process's, so the tools of all runs take
  turns (one lock for the process, held from the tool's start to its end); the engine's own
  paths are absolute and do not move with it.
- **A tool's result names the run's files relative to its workspace.** Output that holds the
  workspace's absolute path (a traceback, ``pwd``) reads it as a relative one (``./`` taken
  out, the bare folder read as ``.``): the same text in every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlab.agent import Tool
from ctxlab.messages import TextBlock, ToolResultBlock

__all__ = ["FolderTool", "folder_pattern", "in_folder", "relative_in", "working_in"]

_WORKING_FOLDER = threading.Lock()
"""Held while a tool runs in a run's folder: the working folder is the whole process's."""

_WAIT = 0.005
"""Seconds between tries of the lock (polled: a cancelled wait leaves nothing holding it)."""


@contextlib.asynccontextmanager
async def working_in(folder: Path) -> AsyncIterator[None]:
    """The process's working folder set to ``folder`` for the block (one block at a time in
    the process), set back after it."""
    while not _WORKING_FOLDER.acquire(blocking=False):
        await asyncio.sleep(_WAIT)
    try:
        try:
            previous: str | None = os.getcwd()
        except OSError:  # the working folder was removed: there is nothing to go back to
            previous = None
        os.chdir(folder)
        try:
            yield
        finally:
            if previous is not None:
                with contextlib.suppress(OSError):
                    os.chdir(previous)
    finally:
        _WORKING_FOLDER.release()


def folder_pattern(folder: Path) -> re.Pattern[str]:
    """The folder's absolute path (as given and resolved) when it names the folder itself or
    something in it — not a longer name that starts alike (``workspace2``)."""
    forms = sorted({str(folder.absolute()), str(folder.resolve())}, key=len, reverse=True)
    names = "|".join(re.escape(f.rstrip("/\\")) for f in forms)
    return re.compile(rf"(?:{names})(?:[/\\]+|(?![\w-]|\.[\w.-]))")


def relative_in(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with each absolute path of the folder ``pattern`` finds read relative to it."""
    if not text:
        return text
    return pattern.sub(lambda m: "" if m.group(0)[-1] in "/\\" else ".", text)


@dataclass(eq=False)
class FolderTool(Tool):
    """A tool of a run: ``inner`` run with the working folder at ``folder`` (see the module),
    its result's text naming the folder's files relative to it."""

    inner: Tool | None = field(default=None, repr=False)
    folder: Path | None = None

    async def run(self, tool_use_id: str, arguments: Mapping[str, Any]) -> ToolResultBlock:
        assert self.inner is not None and self.folder is not None
        async with working_in(self.folder):
            result = await self.inner.run(tool_use_id, arguments)
        pattern = folder_pattern(self.folder)
        if isinstance(result.content, str):
            return result.model_copy(update={"content": relative_in(result.content, pattern)})
        content = tuple(
            b.model_copy(update={"text": relative_in(b.text, pattern)})
            if isinstance(b, TextBlock)
            else b
            for b in result.content
        )
        return result.model_copy(update={"content": content})


def in_folder(tools: Iterable[Tool | Callable[..., Any]], folder: Path) -> list[Tool]:
    """``tools`` (a run's: tools or plain functions) each made a `FolderTool` in ``folder``."""
    made: list[Tool] = []
    for item in tools:
        tool = item if isinstance(item, Tool) else Tool.from_function(item)
        wrapped = FolderTool(
            name=tool.name,
            description=tool.description,
            fn=tool.fn,
            arguments=tool.arguments,
            always_allowed=tool.always_allowed,
            for_workspace=tool.for_workspace,
            inner=tool,
            folder=folder.absolute(),
        )
        wrapped.input_schema = tool.input_schema  # as the tool describes itself
        made.append(wrapped)
    return made
