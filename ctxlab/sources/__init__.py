"""Sources of steps other than ctxlab's own agent, which a Lab watches as it watches an `Agent`:
a recording (`ReplaySession`, as recorded or replayed), another framework's agent
(`ObservedSession`), a Claude Code session file as it is written (`follow`)."""

from ctxlab.sources._base import ModelInfo, StepSource
from ctxlab.sources._follow import FollowedSession, follow
from ctxlab.sources._observed import ObservedSession
from ctxlab.sources._replay import VIEWS, ReplaySession, View

__all__ = [
    "VIEWS",
    "FollowedSession",
    "ModelInfo",
    "ObservedSession",
    "ReplaySession",
    "StepSource",
    "View",
    "follow",
]
