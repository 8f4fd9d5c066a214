"""The offline demo: a sample project, its workspace tools, and an agent on `DemoModel`.

``demo_agent()`` copies the sample project (a small invoicing library with a discount bug and a
long pricing log) into a fresh workspace and returns an agent that fixes it with real tool runs.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ctxlab.agent import Agent
from ctxlab.config._config import ContextConfig
from ctxlab.demo._tools import workspace_tools
from ctxlab.exceptions import UsageError, WorkspaceExists, WriteError
from ctxlab.fork import BranchRun, Workspace
from ctxlab.models import DemoModel, Model
from ctxlab.util._checks import shown
from ctxlab.util._path_args import os_problem, path_argument

__all__ = [
    "DEMO_PROMPT",
    "DEMO_SYSTEM",
    "DEMO_WORKSPACE",
    "demo_agent",
    "demo_config",
    "prepare_workspace",
    "task_done",
    "workspace_tools",
]

PROJECT = Path(__file__).parent / "project"

MARKER = ".ctxlab-demo"
"""The file that marks a folder as a demo workspace ctxlab made (and may copy over again)."""


DEMO_PROMPT = "The test suite of the ledger project fails. Find the bug, fix it and verify."
"""The prompt the tour and ``python -m ctxlab demo`` start with."""

DEMO_SYSTEM = (
    "You are a careful software engineer working in the ledger project's workspace. Plan with "
    "todo_write, read before you edit, run the tests to verify, and report what you changed."
)


def prepare_workspace(path: str | Path | None = None) -> Path:
    """Copy the sample project into ``path`` and return it. Without a path, a temporary folder
    is made and removed again when the Python process ends.

    Also writes ``logs/pricing.log``: 1,200 deterministic lines of discount computations, long
    enough that grepping it produces a result the pipeline offloads.
    """
    if path is None:
        target = Path(tempfile.mkdtemp(prefix="ctxlab-demo-"))
        # A folder ctxlab made for the demo goes when the process ends; pass a path to keep it.
        atexit.register(shutil.rmtree, target, ignore_errors=True)
    else:
        target = path_argument(path, "path", what="a folder for the demo")
    try:
        return _fill(target)
    except WorkspaceExists:  # (an OSError of ctxlab's own, said already)
        raise
    except OSError as exc:  # a read-only folder, a file on the way
        msg = f"cannot make the demo workspace in {target}: {os_problem(exc)}"
        raise WriteError(msg) from exc


def _fill(target: Path) -> Path:
    if target.exists() and not target.is_dir():
        msg = f"{target} is a file, not a folder; pass an empty or new folder for the demo"
        raise WorkspaceExists(msg)
    target.mkdir(parents=True, exist_ok=True)
    # Only a folder ctxlab made for the demo (its marker) is written over: a folder of the
    # user's, even one with a ledger/ of its own, never is.
    if any(target.iterdir()) and not (target / MARKER).is_file():
        clashes = sorted(
            str(p.relative_to(PROJECT))
            for p in PROJECT.rglob("*")
            if (target / p.relative_to(PROJECT)).exists() and p.is_file()
        )
        would = f" (it would overwrite {', '.join(clashes[:5])})" if clashes else ""
        msg = (
            f"{target} is not empty and is not a demo workspace ctxlab made{would}; pass an "
            "empty or new folder"
        )
        raise WorkspaceExists(msg)
    (target / MARKER).write_text("A ctxlab demo workspace: ctxlab may write over it.\n")
    shutil.copytree(
        PROJECT, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    log = target / "logs" / "pricing.log"
    log.parent.mkdir(exist_ok=True)
    lines = []
    for i in range(1200):
        amount = 500 + (i * 7919) % 90000
        percent = (5, 10, 15, 20, 25)[i % 5]
        wrong = amount - round(amount * percent / 10)
        lines.append(
            f"2026-11-{1 + i // 60:02d}T{(i // 4) % 24:02d}:{(i * 7) % 60:02d}:00Z INFO pricing "
            f"invoice=INV-{10000 + i} apply_discount(amount_cents={amount}, percent={percent}) "
            f"-> {wrong}"
        )
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def demo_config(**overrides: Any) -> ContextConfig:
    """The demo's `ContextConfig`: defaults, with tool results capped at 1,500 tokens.

    The cap suits the demo model's 8,000-token window (the 50,000-token default would let one
    test run fill it).
    """
    return ContextConfig(tool_result_limit=1500).merge(**overrides)


def demo_agent(
    workspace: str | Path | None = None,
    *,
    model: Model | None = None,
    context_config: ContextConfig | None = None,
    **kwargs: Any,
) -> Agent:
    """An agent on the sample project: `DemoModel` (or ``model``) with the workspace tools and
    the task list (``todo_write``). Extra keyword arguments go to `Agent` (e.g. ``session_log``)."""
    root = prepare_workspace(workspace)
    agent = Agent(
        name="demo",
        system_prompt=DEMO_SYSTEM,
        model=model or DemoModel(),
        tools=workspace_tools(root),
        context_config=context_config or demo_config(),
        workspace=root,
        **kwargs,
    )
    agent.tasks.enable_list()
    return agent


DEMO_WORKSPACE = Workspace(prepare_workspace, redo=("edit_file",))
"""Where a fork of a demo session gets its files (`ctxlab.fork`): the sample project as it was
at the start, with the session's edits before the fork made again — its state at the fork."""


async def task_done(run: BranchRun) -> bool:
    """The demo task's outcome check for `ctxlab.fork.run_forward`: whether the sample
    project's tests pass in the run's workspace (run in a subprocess, off the event loop; no
    bytecode written)."""
    if not hasattr(run, "workspace"):
        msg = f"task_done checks a run of ctxlab.fork.run_forward (a BranchRun), got {shown(run)}"
        raise UsageError(msg)
    if run.workspace is None:
        return False
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "unittest",
        "discover",
        "-s",
        "tests",
        "-t",
        ".",
        cwd=run.workspace,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        return await asyncio.wait_for(process.wait(), timeout=120) == 0
    except TimeoutError:
        process.kill()  # a hung test run fails the check; it never outlives it
        await process.wait()
        return False
