"""What the fork tests share: a demo session on `MemorylessModel` with a session log, and
independent instruments — a hash of a folder tree and of a file, the project's own tests run in
a subprocess (not ctxlab's check), the requests a session sent (from its events)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxlab import SessionLog
from ctxlab.agent import Agent
from ctxlab.demo import DEMO_PROMPT, DEMO_WORKSPACE, demo_agent, demo_config
from ctxlab.fork import Branch, fork
from ctxlab.messages._request import ModelRequest
from ctxlab.models import MemorylessModel
from tests.helpers import Message, requests_sent, results_of


def tree_hash(root: Path) -> str:
    """Every entry under ``root`` — its path, kind, bytes or link target — in one hash."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"file:" + path.read_bytes())
        else:
            digest.update(b"dir")
    return digest.hexdigest()


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def project_tests_pass(folder: Path) -> bool:
    """The sample project's tests, run here in a subprocess (the tests' own oracle)."""
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."],
        cwd=folder,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    return done.returncode == 0


@dataclass
class Session:
    """A finished demo session: its agent, workspace, log file and the requests it sent."""

    agent: Agent
    workspace: Path
    log: Path
    sent: list[ModelRequest]


async def demo_session(folder: Path, **config: object) -> Session:
    """The demo task on `MemorylessModel` under ``demo_config(**config)``, logged."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "origin.sqlite"
    agent = demo_agent(
        folder / "origin",
        model=MemorylessModel(),
        context_config=demo_config(**config),
        session_log=SessionLog(log),
    )
    sent = requests_sent(agent)
    await agent(DEMO_PROMPT)
    return Session(agent, folder / "origin", log, sent)


HINT = re.compile(r"refer to the file in '([^']+)' for the truncated content")
"""The hint a truncated tool result ends with, naming the file that holds the whole of it."""


async def cut_branch(agent: Agent, at: int, root: Path) -> Branch:
    """The branch ``cut`` of ``agent`` at step ``at`` (under ``root``): tool results cut at 300
    tokens, in the demo project as it was, the session's edits before ``at`` made again."""
    return await fork(
        agent,
        at=at,
        name="cut",
        config=demo_config(tool_result_limit=300),
        workspace=DEMO_WORKSPACE,
        root=root,
    )


def offload_hints(messages: Sequence[Message]) -> dict[str, str]:
    """The file each truncated result among ``messages`` names in its hint, by tool call id."""
    return {
        call: match.group(1)
        for call, text in results_of(messages).items()
        if (match := HINT.search(text))
    }


def check_tests(run: object) -> bool:
    """A `run_forward` check made of `project_tests_pass` (independent of ctxlab.demo's)."""
    workspace = getattr(run, "workspace", None)
    return workspace is not None and project_tests_pass(workspace)


class RelativeFolder:
    """The tests' own offloader as a run offloads (`ctxlab.fork` shows a run its files by their
    path under its workspace): writes each file under ``root``, returns its path there."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative_path: str, data: bytes) -> str:
        target = self.root / relative_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return relative_path
