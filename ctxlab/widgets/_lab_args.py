"""What a `Lab` takes from its caller, checked: what it watches and the item it opens.

Each check raises a `UsageError` naming what was passed and what the Lab takes instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.agent import Agent
from ctxlab.exceptions import UsageError
from ctxlab.sources._base import StepSource
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    from ctxlab.widgets._recording import RecordingView


def watched(agent: object) -> None:
    """Refuse what a Lab cannot watch: anything but an Agent or a source of steps."""
    if not isinstance(agent, Agent | StepSource):
        msg = (
            "a Lab watches an Agent or a source of steps (ObservedSession, ReplaySession; "
            f"open a recording with await Lab.open(path, ...)), got {shown(agent)}"
        )
        raise UsageError(msg)


def item_id_argument(item_id: object) -> str:
    """``item_id`` when it is text (an item's id), else a `UsageError`."""
    if not isinstance(item_id, str):
        msg = f"item_id is an item's id (text: manifest.items_frame()['id']), got {shown(item_id)}"
        raise UsageError(msg)
    return item_id


def a_recording(recording: RecordingView | None, does: str) -> RecordingView:
    """The Lab's recording, or a `UsageError`: only a Lab over a recording ``does`` that."""
    if recording is None:
        msg = f"only a Lab over a recording {does}; this one watches a live agent"
        raise UsageError(msg)
    return recording
