"""What a `Lab` shows of its selected request: the map, and the visible tab's panel.

Only the visible tab is rendered, so that a long session stays fast while a call runs; changing
tabs renders the one that comes into view.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from ctxlab.widgets._lab_args import item_id_argument
from ctxlab.widgets._steps import step_number

if TYPE_CHECKING:
    from ctxlab.widgets._lab import Lab

__all__ = [
    "CONTEXT_TAB",
    "MANIFEST_TAB",
    "Shown",
    "open_item",
    "render_later",
    "render_selection",
    "tab_changed",
]

MANIFEST_TAB, CONTEXT_TAB, CONFIG_TAB, SOURCES_TAB = 0, 1, 2, 3
"""The tabs' indexes, in the order of the Lab's ``_TABS``."""

T = TypeVar("T")


class Shown(Generic[T]):
    """A Lab's panel of the selected request, kept under ``name``: read through the Lab, it is
    filled first when its render waits (`render_later`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, lab: None, owner: type[Any]) -> Shown[T]: ...
    @overload
    def __get__(self, lab: Lab, owner: type[Any]) -> T: ...
    def __get__(self, lab: Lab | None, owner: type[Any]) -> Shown[T] | T:
        if lab is None:
            return self
        lab._render_deferred()
        return cast(T, getattr(lab, self.name))


def render_later(lab: Lab, step: int) -> None:
    """Select ``step`` (the caller drew its line on the plot) and fill its panels (the map, the
    visible tab) at the event loop's next turn, or when one is read before (`Shown`)."""
    # After the cell that opened a recording has displayed the Lab: the page draws the plot
    # while the kernel describes the last request (10,000 items at 5,000 requests, a quarter of
    # `Lab.open`). A render before that turn (a selection, a tab) supersedes it.
    lab.selected = step_number(step)
    lab.forks.sync()
    lab._unrendered = True
    asyncio.get_running_loop().call_soon(lab._render_deferred)


def render_selection(lab: Lab) -> None:
    """Draw the selected request in the map and in the visible tab (nothing when none is)."""
    if lab.selected is None:
        return
    step = lab.selected
    manifest = lab.log.manifests[step]
    lab.map.show(manifest)
    if lab.tabs.selected_index == MANIFEST_TAB:
        lab.manifest.show(
            step,
            manifest,
            lab.log.requests[step],
            calibrated=lab.log.rows[step]["calibrated"],
            previous=lab.log.requests[step - 1] if step > 0 else None,
        )
    elif lab.tabs.selected_index == CONTEXT_TAB:
        lab.context.show(step, lab.log.requests[step], lab.agent.token_cache, manifest)


def tab_changed(lab: Lab) -> None:
    """A tab came into view: bring the Config and Sources tabs up to date, render the tab."""
    if lab.tabs.selected_index == CONFIG_TAB:
        lab.config.sync()
    if lab.tabs.selected_index == SOURCES_TAB:
        lab.sources.sync()
    # Through the Lab: a render waiting for its turn (`render_later`) is done by this one, not
    # first (its panels read) and then again.
    lab._render_selection()


def open_item(lab: Lab, item_id: str, *, again: bool = False) -> None:
    """Open item ``item_id`` of the selected request (`Lab.open_item`)."""
    item_id = item_id_argument(item_id)
    if not item_id or lab.selected is None:
        return
    if item_id == lab.manifest.highlight and (not again or lab.tabs.selected_index == CONTEXT_TAB):
        return  # already open (a click's trait change opens it before its message)
    lab.manifest.highlight = lab.context.focus = item_id
    lab.map.selected = item_id
    lab.manifest.table.selected = item_id
    if lab.tabs.selected_index == CONTEXT_TAB:
        render_selection(lab)
    else:
        lab.tabs.selected_index = CONTEXT_TAB  # renders the Context tab
