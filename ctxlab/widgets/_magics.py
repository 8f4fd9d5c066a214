"""Notebook habits: ``%load_ext ctxlab``, then

- ``%%ctx`` — the cell's text is sent to the current Lab's agent (the Lab displayed last), in
  the background like the Send button: the panels update while it runs;
- ``%ctx_budget`` — one line about the latest request: its total against the limit, by
  placement, and the trigger.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.widgets._lab import Lab

__all__ = ["budget_line", "current_lab", "load_ipython_extension", "send_cell"]

_current: list[Lab] = []


def remember(lab: Lab) -> None:
    """Make ``lab`` the current Lab (the Lab calls this when it is created or displayed)."""
    if _current:
        _current[0] = lab
    else:
        _current.append(lab)


def current_lab() -> Lab:
    """The Lab created or displayed last; `UsageError` when there is none."""
    if not _current:
        msg = "no Lab yet: create one first, e.g. lab = Lab(agent); lab"
        raise UsageError(msg)
    return _current[0]


def budget_line(lab: Lab) -> str:
    """The latest request in one line."""
    if not len(lab.log):
        return "no request yet"
    step = len(lab.log) - 1
    row = lab.log.rows[step]
    limit = row["input_limit"] or 0
    share = f" ({100 * row['total'] / limit:.0f} %)" if limit > 0 else ""
    parts = " · ".join(
        f"{p} {row[p]:,}"
        for p in ("system", "tools", "summary", "conversation", "transient", "references")
        if row[p]
    )
    trigger = row["trigger_tokens"]
    # A recording as recorded has no trigger of ctxlab's: its agent's own is not in the file.
    where = f"trigger at {trigger:,}" if trigger is not None else "no trigger known (as recorded)"
    return f"request {step}: {row['total']:,} / {limit:,} tokens{share} — {parts}; {where}"


def send_cell(lab: Lab, text: str) -> asyncio.Task[Any] | None:
    """Start a call with ``text`` in the background (what ``%%ctx`` does)."""
    return lab.start(text.strip())


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%ctx`` and ``%ctx_budget`` (``%load_ext ctxlab``)."""

    def ctx(line: str, cell: str) -> Any:
        return send_cell(current_lab(), cell)

    def ctx_budget(line: str) -> None:
        print(budget_line(current_lab()))

    ipython.register_magic_function(ctx, magic_kind="cell", magic_name="ctx")
    ipython.register_magic_function(ctx_budget, magic_kind="line", magic_name="ctx_budget")
