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
  out, the bare folder read as ``.``): the same text in every run. So does the state a run
  starts from (`relative_state`): a traceback the origin's tools printed before the fork named
  the origin's absolute folder — the user's project, not the run's files — and reads relative
  to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ctxlab.agent import ForkPoint, Tool
from ctxlab.fork._offloads import mapped
from ctxlab.messages import TextBlock, ToolResultBlock
from ctxlab.messages._state import WorkingState

__all__ = [
    "FolderTool",
    "folder_pattern",
    "in_folder",
    "relative_block",
    "relative_in",
    "relative_state",
    "working_in",
]

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


_Block = TypeVar("_Block")


def relative_block(block: _Block, patterns: Sequence[re.Pattern[str]]) -> _Block:
    """``block`` (a text block or a tool result; any other as it is) with each absolute path
    of the folders ``patterns`` find read relative to its folder."""

    def relative(text: str) -> str:
        for pattern in patterns:
            text = relative_in(text, pattern)
        return text

    if isinstance(block, TextBlock):
        return block.model_copy(update={"text": relative(block.text)})
    if not isinstance(block, ToolResultBlock):
        return block
    if isinstance(block.content, str):
        return block.model_copy(update={"content": relative(block.content)})
    content = tuple(
        b.model_copy(update={"text": relative(b.text)}) if isinstance(b, TextBlock) else b
        for b in block.content
    )
    return block.model_copy(update={"content": content})


def relative_state(point: ForkPoint, folders: Iterable[str | Path]) -> ForkPoint:
    """``point`` with each absolute path of ``folders`` (the origin's workspace, the folder the
    user gave to copy) that its state's texts hold read relative to that folder."""
    patterns = [folder_pattern(Path(f)) for f in folders if f]
    if not patterns:
        return point

    def relative(text: str) -> str:
        for pattern in patterns:
            text = relative_in(text, pattern)
        return text

    dumped = point.state.model_dump()
    changed = mapped(dumped, relative)
    if changed == dumped:
        return point
    return dataclasses.replace(point, state=WorkingState.model_validate(changed))


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
        return relative_block(result, (folder_pattern(self.folder),))


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
