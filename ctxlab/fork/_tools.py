"""A branch's tools: each one remade over the branch's own workspace, or shared with the
original because the user said it is safe to share — never silently shared.

A tool can be remade when it says how (`Tool.for_workspace`, which the demo's workspace tools
set) or when the caller gives a function that builds a branch's tools for a folder. Any other
tool could act on the original's files or on the world outside: a fork refuses it, naming it,
unless it is listed in ``safe_tools`` (a pure function, a read-only lookup).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.agent import Tool
from ctxlab.exceptions import CtxlabError, ForkError

__all__ = ["ToolPlan", "names_of", "plan_tools"]

ToolFactory = Callable[[Path], Iterable[Tool | Callable[..., Any]]]
"""Builds a branch's tools over the folder it is given."""


@dataclass(frozen=True)
class ToolPlan:
    """How each run of a branch gets its tools."""

    factory: ToolFactory | None = None
    """The caller's function building all of them for a folder."""
    remade: tuple[Callable[[Path], Tool], ...] = ()
    """Tools remade over the run's folder (their `Tool.for_workspace`)."""
    shared: tuple[Tool, ...] = ()
    """Tools the user said are safe to share with the original, as they are."""

    @property
    def needs_folder(self) -> bool:
        """Whether the tools act on a folder (a run without a workspace gets an empty one)."""
        return self.factory is not None or bool(self.remade)

    def build(self, folder: Path | None) -> list[Tool | Callable[..., Any]]:
        """The tools of one run, over ``folder``."""
        made: list[Tool | Callable[..., Any]] = []
        if folder is not None:
            if self.factory is not None:
                made.extend(_built(self.factory, folder))
            made.extend(remake(folder) for remake in self.remade)
        made.extend(self.shared)
        return made


_TOOLS_ARE = (
    "a function building the branch's tools over the folder it is given, or a list of tools "
    "(Tool objects or plain functions)"
)


def plan_tools(tools: Any, safe_tools: Iterable[str] | bool) -> ToolPlan:
    """The `ToolPlan` of ``tools`` (a function building tools for a folder, or tools and plain
    functions). `ForkError` naming each tool that can neither be remade nor is called safe,
    and for ``tools`` or ``safe_tools`` of another kind."""
    if tools is None:
        return ToolPlan()
    if callable(tools) and not isinstance(tools, Tool | Iterable):
        return ToolPlan(factory=tools)
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Iterable | Tool):
        msg = f"tools must be {_TOOLS_ARE}; got {type(tools).__name__}"
        raise ForkError(msg)
    safe_all = safe_tools is True
    safe = set() if isinstance(safe_tools, bool) else set(names_of(safe_tools, "safe_tools"))
    remade: list[Callable[[Path], Tool]] = []
    shared: list[Tool] = []
    refused: list[str] = []
    for number, item in enumerate([tools] if isinstance(tools, Tool) else tools):
        if not (isinstance(item, Tool) or callable(item)):
            msg = (
                f"tools[{number}] ({type(item).__name__}) is not a tool: tools must be {_TOOLS_ARE}"
            )
            raise ForkError(msg)
        made = item if isinstance(item, Tool) else Tool.from_function(item)
        if made.for_workspace is not None:
            remade.append(made.for_workspace)
        elif safe_all or made.name in safe:
            shared.append(made)
        else:
            refused.append(made.name)
    if refused:
        names = ", ".join(repr(n) for n in refused)
        msg = (
            f"tool {names} cannot be isolated for a branch: it says nothing of how to act on "
            "another folder, so a branch would share it with the original (and its files). Give "
            "fork tools=<a function building the tools for a folder>, or give the tool a "
            "for_workspace, or — if it has no side effects — name it in safe_tools=[...]"
        )
        raise ForkError(msg)
    return ToolPlan(remade=tuple(remade), shared=tuple(shared))


def names_of(value: Any, what: str) -> tuple[str, ...]:
    """``value`` (tool names: a list, or one name) as a tuple; `ForkError` naming ``what``
    (the argument) for anything else. One name is one name, never its characters."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        names = tuple(value)
        if all(isinstance(name, str) for name in names):
            return names
    msg = f"{what} takes tool names (e.g. {what}=['edit_file']); got {value!r:.80}"
    raise ForkError(msg)


def _built(factory: ToolFactory, folder: Path) -> list[Tool | Callable[..., Any]]:
    """What the caller's ``factory`` builds over ``folder``: tools, else a `ForkError`."""
    name = getattr(factory, "__name__", repr(factory))
    try:
        made = list(factory(folder))
    except CtxlabError:
        raise
    except Exception as exc:  # the caller's code: any failure is theirs, said as a ForkError
        msg = (
            f"the tools function {name} failed over the branch's folder {str(folder)!r}: "
            f"{type(exc).__name__}: {exc}. tools must be {_TOOLS_ARE}"
        )
        raise ForkError(msg) from exc
    wrong = [type(t).__name__ for t in made if not (isinstance(t, Tool) or callable(t))]
    if wrong:
        msg = f"the tools function {name} built a {wrong[0]} (not a tool): it must return tools"
        raise ForkError(msg)
    return made
