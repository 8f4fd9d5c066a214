"""`Branch`: a session forked at one step under a config — the recipe each run of the branch is
made from (its own agent, workspace and session log) — and `BranchRun`, one such run."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlab.agent import Agent, ForkPoint
from ctxlab.agent._copy import AgentSettings, begin_at
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import CtxlabError, ForkError
from ctxlab.fork._arrival import ARRIVAL_FOLDER, Arrival
from ctxlab.fork._offloads import RunOffloader, own_offloads
from ctxlab.fork._run_folder import in_folder
from ctxlab.fork._tools import ToolPlan
from ctxlab.fork._workspace import Workspace, folder_problem, redo_calls
from ctxlab.messages._request import ModelRequest
from ctxlab.models import Model
from ctxlab.session import SessionLog
from ctxlab.util._checks import whole_number

__all__ = ["Branch", "BranchRun", "ModelSource"]

ModelSource = Model | Callable[[], Model]
"""A model (each run gets `Model.branch` of it) or a function making one per run."""

_MAX_NUMBER = 10**9
"""The highest run number `Branch.spawn` takes (a folder is named by it)."""


@dataclass
class BranchRun:
    """One run of a branch: its own agent, workspace and log, and (once run forward) what it
    did."""

    branch: Branch
    run: int
    """Its number among the branch's runs, from 0."""
    agent: Agent | None
    """The run's agent (None for a run made on a Dask worker: its record came back)."""
    workspace: Path | None
    """The run's own folder of files."""
    notes: list[str] = field(default_factory=list)
    """What went unexpectedly while it was made (a redone call that gave another result)."""
    manifests: list[Any] = field(default_factory=list)
    """Its own requests' manifests, from the fork on (summary calls included)."""
    requests: list[ModelRequest | None] = field(default_factory=list)
    """What its model was sent at each of its steps from the fork on (None: failed)."""
    reply: str | None = None
    """Its final reply's text, when it replied."""
    error: str | None = None
    """Why it stopped without a reply (the model's error, max steps, ...)."""
    passed: bool | None = None
    """The outcome check's verdict (None without a check, or when it raised: see notes)."""
    seconds: float = 0.0
    """How long it ran."""
    compactions: int = 0
    """Compactions it made."""
    spent: float = 0.0
    """USD its replies' usage bills (`ctxlab.analysis._budget.Budget`): replies from a
    response cache, and a recording's own replies, cost nothing."""
    from_cache: int = 0
    """Its replies that came from a response cache."""


@dataclass
class Branch:
    """A session forked at one step under a config: where each of its runs starts (see
    `fork`). ``branch.agent`` is a ready agent (run 0) to drive by hand or in a Lab;
    `run_forward` makes fresh runs of it."""

    name: str
    """The branch's name (unique among the branches of one folder)."""
    config: ContextConfig
    config_name: str
    """How the config is named in outcome tables (a preset's name, ``original``, ...)."""
    at: int
    """The step of the origin session it forks at."""
    arrival: Arrival
    """How it arrives there (`ARRIVALS`)."""
    origin: str
    """The session it was forked from (a session id, a recording's name)."""
    point: ForkPoint
    """Where each run starts: the state, task state, history and earlier manifests."""
    before: list[ModelRequest | None]
    """The requests before the fork in this branch's telling (the origin's, or the replay's)."""
    settings: AgentSettings
    model: ModelSource
    tools: ToolPlan
    workspace: Workspace | None
    folder: Path
    """Where its runs' folders are made (``run-0``, ``run-1``, ...)."""
    session_log: bool = False
    """Whether each run keeps a session log (``session.sqlite`` in its folder)."""
    origin_folder: str | None = None
    """The origin's workspace, as its requests name it (taken out when contexts are compared)."""
    _hand: BranchRun | None = field(default=None, repr=False)
    _made: int = field(default=0, repr=False)

    @property
    def agent(self) -> Agent:
        """Run 0's agent, continuing from the fork: drive it by hand, or open it in a Lab."""
        assert self._hand is not None and self._hand.agent is not None  # made by `fork`
        return self._hand.agent

    @property
    def first_step(self) -> int:
        """The branch's first own step: the number of steps before the fork in its telling."""
        return sum(m.purpose in ("reasoning", "recovery") for m in self.point.manifests)

    def __getstate__(self) -> dict[str, Any]:
        # What a Dask worker gets: the recipe, not run 0 (its agent holds the event loop's
        # futures and an open log): the worker makes runs of its own.
        state = dict(self.__dict__)
        state["_hand"] = None
        return state

    def untouched(self) -> BranchRun | None:
        """Run 0, when it has made no request since the fork (else None)."""
        hand = self._hand
        if hand is None or hand.agent is None:
            return None
        return hand if len(hand.agent.manifests) == len(self.point.manifests) else None

    async def spawn(self, number: int | None = None) -> BranchRun:
        """A new run (numbered ``number``, else the next): a fresh folder (workspace copied or
        filled, redone calls run), a fresh agent at the fork."""
        number = self._number(number)
        # The folder is copied off the event loop: a large workspace blocks no other run.
        home, workspace, notes = await asyncio.to_thread(self._folders, number)
        return await self._start(self._run_in(number, home, workspace, notes))

    def _new_run(self, number: int | None = None) -> BranchRun:
        """A run's folder and agent, not yet at the fork."""
        number = self._number(number)
        return self._run_in(number, *self._folders(number))

    def _number(self, number: object) -> int:
        if number is None:
            number, self._made = self._made, self._made + 1
            return number
        # A run's number names its folder: a whole number a folder name can hold.
        return whole_number(number, "number", high=_MAX_NUMBER)

    def _folders(self, run: int) -> tuple[Path, Path | None, list[str]]:
        """Run ``run``'s folder, its workspace (copied or filled) when it has one, and the notes
        of its making (a link out of the folder copied as a file or left out)."""
        home = self.folder / f"run-{run}"
        workspace: Path | None = None
        notes: list[str] = []
        try:
            home.mkdir(parents=True)
            if self.workspace is not None:
                workspace = self.workspace.make(home / "workspace", notes)
            elif self.tools.needs_folder:
                workspace = home / "workspace"
                workspace.mkdir()
        except OSError as exc:
            raise ForkError(folder_problem(self.folder, exc)) from exc
        return home, workspace, notes

    def _run_in(self, run: int, home: Path, workspace: Path | None, notes: list[str]) -> BranchRun:
        """Run ``run``'s agent, over its folders."""
        model = self.model.branch() if isinstance(self.model, Model) else _made(self.model)
        summary = self.settings.arguments.get("summary_model")
        try:
            tools = self.tools.build(workspace)
            agent = self.settings.build(
                model=model,
                summary_model=summary.branch() if isinstance(summary, Model) else None,
                # Each run in its own folder: relative paths resolve there (`in_folder`).
                tools=in_folder(tools, workspace) if workspace is not None else tools,
                context_config=self.config,
                workspace=workspace,
                session_log=SessionLog(home / "session.sqlite") if self.session_log else None,
                session_id=f"{self.name}-{run}-{uuid.uuid4().hex[:8]}",
            )
        except CtxlabError as exc:
            msg = f"branch {self.name!r} cannot be made: {exc}"
            raise ForkError(msg) from exc
        if workspace is not None:
            # Its offload hints name files relative to its workspace: the model is shown the
            # same paths whatever folder the run was made in (`own_offloads`).
            agent.offloader = RunOffloader(workspace)
        return BranchRun(self, run, agent, workspace, notes=notes)

    async def _start(self, run: BranchRun) -> BranchRun:
        assert run.agent is not None
        origin = {"origin": self.origin, "branch": self.name, "arrival": self.arrival}
        # The files the state's offload hints name, copied into the run's own workspace.
        roots = [self.folder / ARRIVAL_FOLDER]
        if self.origin_folder is not None:
            roots.append(Path(self.origin_folder))
        point, notes = own_offloads(self.point, roots, run.workspace)
        run.notes.extend(notes)
        begin_at(run.agent, point, origin=origin)
        redo = self.workspace.redo if self.workspace is not None else ()
        run.notes.extend(await redo_calls(self.point.history, redo, run.agent.tools))
        return run


def _made(make: Callable[[], Model]) -> Model:
    """The model ``make`` (the caller's function) makes for a run; a `ForkError` if it fails."""
    try:
        return make()
    except CtxlabError:
        raise
    except Exception as exc:  # the caller's code: its failure is said, typed
        name = getattr(make, "__name__", repr(make))
        msg = f"the model function {name} failed: {type(exc).__name__}: {exc}"
        raise ForkError(msg) from exc
