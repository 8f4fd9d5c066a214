"""`fork`: a branch of a session at one of its steps, under another config — a live agent's
(its own record of each step) or a recording's. What the fork takes from its origin (settings,
tools, workspace) is taken once, here; each run of the branch is made from it (`Branch`)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxlab.agent import Agent, ForkPoint, fork_point
from ctxlab.agent._copy import AgentSettings, agent_settings
from ctxlab.agent._forkpoint import step_requests
from ctxlab.analysis import recorded_requests
from ctxlab.config._config import ContextConfig, require_config
from ctxlab.exceptions import CtxlabError, ForkError, PreparationError
from ctxlab.fork._arrival import (
    ARRIVAL_FOLDER,
    ARRIVALS,
    Arrival,
    checked_arrival,
    checked_step,
    recorded_point,
    replayed_point,
)
from ctxlab.fork._branch import Branch, BranchRun, ModelSource
from ctxlab.fork._branch_folder import MAX_NAME, branch_folder, checked_name, checked_root
from ctxlab.fork._recorded_model import RecordedModel
from ctxlab.fork._replay import model_and_tools
from ctxlab.fork._tools import ToolPlan, names_of, plan_tools
from ctxlab.fork._workspace import Workspace, refuse_inside, workspace_of
from ctxlab.io._source import SessionSource, transcript_of
from ctxlab.materials._tasks import TaskState
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import WorkingState
from ctxlab.models import Model

__all__ = ["MAX_NAME", "config_label", "fork"]


def _config(value: Any, origin: ContextConfig | None) -> tuple[ContextConfig, str]:
    """The branch's config and its name: a preset's name, ``original`` for the origin's own
    config, else the fields it changes (``tool_result_limit=300``)."""
    try:
        if value is None:
            return require_config(origin or ContextConfig()), "original"
        if isinstance(value, str):
            return ContextConfig.preset(value), value
        if isinstance(value, Mapping):
            value = ContextConfig.model_validate(dict(value))
        config = require_config(value)
    except (CtxlabError, ValueError, TypeError) as exc:
        msg = f"the branch's config is not valid: {exc}"
        raise ForkError(msg) from exc
    return config, config_label(config, origin or ContextConfig())


def config_label(config: ContextConfig, base: ContextConfig) -> str:
    """What ``config`` changes of ``base``, in a few words (``original`` when nothing)."""
    mine, theirs = config.model_dump(), base.model_dump()
    changed = [
        f"{key}={value}" if isinstance(value, int | float | str | bool) else key
        for key, value in mine.items()
        if theirs.get(key) != value
    ]
    if not changed:
        return "original"
    return ", ".join(changed[:2]) + (", …" if len(changed) > 2 else "")


async def fork(
    origin: Agent | SessionSource,
    *,
    at: int,
    config: ContextConfig | str | Mapping[str, Any] | None = None,
    name: str | None = None,
    arrival: Arrival = "as_it_was",
    model: ModelSource | Literal["recorded"] | None = None,
    tools: Any = None,
    safe_tools: Iterable[str] | bool = (),
    workspace: Any = None,
    redo: Iterable[str] = (),
    root: str | os.PathLike[str] | None = None,
    session_log: bool | None = None,
) -> Branch:
    """Fork ``origin`` — a live `Agent`, or a recording (a `Transcript`, a file `ctxlab.load`
    reads, or a row of `ctxlab.sessions`, as `Lab.open` takes) — at step ``at`` under ``config``; returns the `Branch`, whose
    ``agent`` continues from there. The original session, its log and its files are only read.

    Args:
        origin: The session to fork.
        at: The step (the Lab's request number; negative counts from the last; the number of
            steps is the end: the session as it is now).
        config: The branch's `ContextConfig`, a preset's name, or the fields of one; a live
            agent's own config when omitted (a control: the same config as the original).
        name: The branch's name (its config's name when omitted): at most `MAX_NAME`
            characters; its folder's name is cut to fit a file system.
        arrival: ``"as_it_was"`` (the state the session had then) or ``"from_start"`` (the
            session replayed under ``config`` up to then): `ARRIVALS`.
        model: The branch's model, or a function making one per run; a live agent's own
            (`Model.branch` of it) when omitted; a recording needs one: ``"recorded"`` (or a
            `RecordedModel`, which may hand over ``then=`` another model) replays its own
            replies and tool results while the branch's requests hold what its requests
            held, and leaves the outcome unknown where they part.
        tools: The branch's tools: a function building them over a folder, or a list of
            tools (`Tool` objects or plain functions); a live agent's own when omitted. Each must be remade over the branch's folder
            (`Tool.for_workspace`) or named in ``safe_tools``.
        safe_tools: Tools the branches may share with the original as they are (you say they
            have no side effects); True for all.
        workspace: What each run's folder starts as: a folder to copy, a function filling one
            (`ctxlab.demo.prepare_workspace`), or a `Workspace`; a live agent's workspace (its
            files now) when omitted.
        redo: Tools whose calls before the fork are run again on each run's folder (see
            `Workspace`): a list of names, or one name.
        root: The folder where the branches' folders are made, made when missing (a
            temporary folder, removed when Python exits, when omitted).
        session_log: Keep a session log per run (by default when the origin agent has one).

    Raises `ForkError` for a step the session never made, a config that is not valid or
    leaves no room, a tool that cannot be isolated, a workspace that cannot be copied, a
    ``root`` where no folder can be made (a file, read-only, a path too long), an argument of
    another kind (each named, with what it takes).
    """
    # Long by its docstring (the public API); the body is: check the arguments, take what the
    # origin gives, make the branch's folder and run 0, arrive (cleaning up if that fails).
    arrival = checked_arrival(arrival)
    _check_model(model)
    name = checked_name(name)
    if session_log is not None and not isinstance(session_log, bool):
        msg = f"session_log must be True, False or None (as the origin), got {session_log!r:.80}"
        raise ForkError(msg)
    folder_root = checked_root(root)
    asked = _Asked(at, config, arrival, model, tools, safe_tools, session_log)
    if isinstance(origin, Agent):
        made = _from_agent(origin, asked)
    else:
        made = _from_recording(origin, asked)
    recipe, arrive = made
    files = workspace_of(workspace, names_of(redo, "redo"), default=recipe.workspace)
    # Checked before any folder is made: one inside the original's files would change them.
    for original in (recipe.workspace, files.source if files is not None else None):
        if isinstance(original, Path):
            refuse_inside(folder_root, original)
    branch = _branch(recipe, name, arrival, files, folder_root)
    branch.name, branch.folder = branch_folder(folder_root, branch.name)
    run = await _arrived(branch, arrival, arrive)
    branch._hand = await branch._start(run)
    return branch


def _check_model(model: object) -> None:
    """Refuse (`ForkError`) a ``model`` that is no model, no function making one, nor
    ``"recorded"``."""
    if (
        model is not None
        and model != "recorded"
        and not (isinstance(model, Model) or callable(model))
    ):
        msg = (
            f"model must be a ctxlab Model or a function making one, or 'recorded' (a "
            f"recording's own replies), got {model!r:.80}"
        )
        raise ForkError(msg)


def _branch(
    recipe: _Recipe,
    name: str | None,
    arrival: Arrival,
    files: Workspace | None,
    folder_root: Path,
) -> Branch:
    """The branch ``recipe`` makes, not yet arrived (its point is empty, its folder the root)."""
    return Branch(
        name=name or recipe.config_name,
        config=recipe.config,
        config_name=recipe.config_name,
        at=recipe.at,
        arrival=arrival,
        origin=recipe.origin,
        point=ForkPoint(recipe.at, WorkingState(), TaskState(), (), ()),
        before=[],
        settings=recipe.settings,
        model=recipe.model,
        tools=recipe.tools,
        workspace=files,
        folder=folder_root,
        session_log=recipe.session_log,
        # As the origin's offload hints name it (its offloader resolves the folder).
        origin_folder=str(recipe.workspace.resolve()) if recipe.workspace is not None else None,
    )


async def _arrived(branch: Branch, arrival: Arrival, arrive: Arrive) -> BranchRun:
    """Make ``branch``'s run 0 and set its point by ``arrive``; return the run. The branch's
    folder is removed if that fails (a failed replay is a `ForkError` saying so)."""
    try:
        run = branch._new_run()
        assert run.agent is not None
        branch.point, branch.before = await arrive(run.agent, branch.folder / ARRIVAL_FOLDER)
    except PreparationError as exc:
        shutil.rmtree(branch.folder, ignore_errors=True)
        msg = (
            f"branch {branch.name!r} cannot arrive {ARRIVALS[arrival]}: replaying the session "
            f"under its config failed: {exc}"
        )
        raise ForkError(msg) from exc
    except BaseException:
        shutil.rmtree(branch.folder, ignore_errors=True)
        raise
    return run


Arrive = Callable[[Agent, Path], Awaitable[tuple[ForkPoint, list[ModelRequest | None]]]]
"""Computes a branch's point from run 0's agent (its counter, window, materials, config) and
the folder a replay offloads into."""


@dataclass(frozen=True)
class _Recipe:
    """What a fork takes from its origin."""

    at: int
    origin: str
    config: ContextConfig
    config_name: str
    settings: AgentSettings
    model: ModelSource
    tools: ToolPlan
    workspace: Path | None
    session_log: bool


_PER_RUN = ("model", "tools", "workspace", "context_config")


@dataclass(frozen=True)
class _Asked:
    """What `fork` was asked, besides its origin."""

    at: int
    config: Any
    arrival: Arrival
    model: ModelSource | Literal["recorded"] | None
    tools: Any
    safe_tools: Iterable[str] | bool
    session_log: bool | None


def _from_agent(agent: Agent, asked: _Asked) -> tuple[_Recipe, Arrive]:
    if agent.running:
        msg = "fork the agent between calls: a call is running (await it, or stop it first)"
        raise ForkError(msg)
    if isinstance(asked.model, str | RecordedModel):
        msg = (
            "model='recorded' replays a recording: fork the agent's saved transcript "
            "(agent.transcript()) to replay it, or give the branch a model"
        )
        raise ForkError(msg)
    point = fork_point(agent, asked.at)  # checks the step before anything is made
    cfg, cfg_name = _config(asked.config, agent.context_config)
    taken = agent_settings(agent)
    # What each run gets of its own (model, tools, workspace, config) is not kept from the
    # origin; where the agent's model summarizes, so does each run's own model.
    arguments = {k: v for k, v in taken.arguments.items() if k not in _PER_RUN}
    if arguments.get("summary_model") is agent.model:
        arguments["summary_model"] = None
    settings = dataclasses.replace(taken, arguments=arguments)
    tools = agent.tools.values() if asked.tools is None else asked.tools
    plan = plan_tools(tools, asked.safe_tools)
    before = step_requests(agent)[: point.step]
    recipe = _Recipe(
        point.step,
        agent.session_id,
        cfg,
        cfg_name,
        settings,
        asked.model or agent.model,
        plan,
        agent.workspace,
        agent.log.store is not None if asked.session_log is None else asked.session_log,
    )

    async def arrive(
        branch_agent: Agent, offloads: Path
    ) -> tuple[ForkPoint, list[ModelRequest | None]]:
        if asked.arrival == "as_it_was":
            return point, before
        return await replayed_point(point.history, point.task, point.step, branch_agent, offloads)

    return recipe, arrive


def _from_recording(origin: Any, asked: _Asked) -> tuple[_Recipe, Arrive]:
    transcript = transcript_of(origin, taker="fork")
    if asked.model is None:
        msg = (
            f"a recording has no model to run forward: pass model=... ('recorded' to replay its "
            f"own replies, MemorylessModel(), AnthropicModel(...)) to fork {transcript.name!r}"
        )
        raise ForkError(msg)
    requests = recorded_requests(transcript)
    step = checked_step(asked.at, len(requests), f"recording {transcript.name!r}")
    cfg, cfg_name = _config(asked.config, None)
    model, tools = _recorded_model(asked, transcript, step)
    arguments = {"name": transcript.name or "recording", "system_prompt": transcript.system}
    recipe = _Recipe(
        step,
        transcript.name,
        cfg,
        cfg_name,
        AgentSettings(Agent, arguments),
        model,
        tools,
        None,
        bool(asked.session_log),
    )
    history = transcript.messages[: requests[step].reply] if step < len(requests) else None

    async def arrive(
        branch_agent: Agent, offloads: Path
    ) -> tuple[ForkPoint, list[ModelRequest | None]]:
        if asked.arrival == "as_it_was":
            return await recorded_point(transcript, step, branch_agent)
        before = transcript.messages if history is None else history
        return await replayed_point(before, TaskState(), step, branch_agent, offloads)

    return recipe, arrive


def _recorded_model(asked: _Asked, transcript: Any, step: int) -> tuple[ModelSource, ToolPlan]:
    """The branch's model and tools (`model_and_tools`: a recording replaying itself)."""
    plan = plan_tools(asked.tools, asked.safe_tools)
    assert asked.model is not None
    return model_and_tools(asked.model, plan, transcript, step)
