"""An agent whose session is logged, run on a scripted model: what the tests of the session log
(and of a transcript exported from it) start from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxlab import ApproximateCounter, SessionLog
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel


async def logged_agent(
    folder: Path, replies: Sequence[Any], tools: Sequence[Callable[..., Any]], *asked: str
) -> tuple[Agent, SessionLog]:
    """An agent on ``replies`` (a scripted model) with ``tools``, its session logged to
    ``folder``/log.sqlite as session "s", after it was asked each of ``asked`` in turn."""
    log = SessionLog(folder / "log.sqlite")
    agent = Agent(
        model=ScriptedModel(list(replies)),
        tools=list(tools),
        counter=ApproximateCounter(),
        session_log=log,
        session_id="s",
    )
    for prompt in asked:
        await agent(prompt)
    return agent, log
