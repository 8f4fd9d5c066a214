"""The handover's discoveries: every command that failed, once, and whether it is fixed.

A run failed when it exited non-zero, was reported as an error, or — no exit status shown —
printed a failure line or a failing tally (`_span.Run`). A command is **fixed** only when its
last run passed after an earlier one failed: a later run that fails differently is not a fix.
Otherwise it is **not yet fixed**, with what its last run printed: its outcome, then its other
failure lines (a few, and how many more were left out).
"""

from __future__ import annotations

import re

from ctxlab.pipeline._span import Run, short

__all__ = ["discoveries", "quoted_command"]

_FAILURES_SHOWN = 4
"""Failure lines of a still-failing command's last run listed before "(+N more not listed)"."""
_NAME = 120  # characters of a command shown (cut at a word end)
_QUOTED = re.compile(r"^`([^`]+)`")

STILL_FAILING = 2
"""The rank (`_handover`'s order when space is short) of a command still failing: with the
edits and the intent, before everything else."""
CARRIED = 6
"""The rank of an earlier summary's line about a command this span did not run."""


def _name(command: str) -> str:
    return f"`{short(command, _NAME)}`"


def quoted_command(line: str) -> str:
    """The command a discovery line names (in backticks, at its start), as `discoveries`
    writes it; "" for any other line."""
    match = _QUOTED.match(line)
    return f"`{match.group(1)}`" if match else ""


def discoveries(
    runs: list[Run], earlier: list[str]
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The discovery lines of an earlier summary (``earlier``) carried forward, then those of
    ``runs`` (in order of each command's first run), each with its rank. An earlier line about
    a command these runs ran again is superseded: by this span's line when it failed here, or
    said fixed when it only passed here."""
    by_command: dict[str, list[Run]] = {}
    for run in runs:
        by_command.setdefault(_name(run.command), []).append(run)
    failing = any(r.failed for r in runs)
    carried: list[tuple[str, int]] = []
    for line in earlier:
        name = quoted_command(line)
        if name not in by_command:
            carried.append((line, CARRIED))
        elif not any(r.failed for r in by_command[name]) and " — not yet fixed" in line:
            # Failed before this span (or an earlier piece of it), passed here: fixed — news
            # that goes first when nothing failed here.
            last = by_command[name][-1]
            if last.outcome != "no result yet":
                was = line.split(" — ", 1)[0]
                fixed = f"{was} — fixed: its last run passed ({last.outcome})"
                carried.append((fixed, STILL_FAILING - 1 if not failing else STILL_FAILING + 1))
    # The command that failed last is said whatever else gives way: a span where something
    # failed never reads "none recorded".
    latest = next((_name(r.command) for r in reversed(runs) if r.failed), None)
    lines: list[tuple[str, int]] = []
    for name, runs_of in by_command.items():
        failed = [r for r in runs_of if r.failed]
        if failed:
            first = STILL_FAILING - 1 if name == latest else None
            lines.extend(_lines(name, runs_of, failed, first))
    return carried, lines


def _lines(
    name: str, runs: list[Run], failed: list[Run], first: int | None
) -> list[tuple[str, int]]:
    last = runs[-1]
    head = f"{name} failed"
    if len(runs) > 1:
        head += f" ({len(failed)} of {len(runs)} runs)"
    if not last.failed and last.outcome != "no result yet":
        fixed = f"fixed: its last run passed ({last.outcome})"
        line = f"{head}: {_failure(failed[-1])} — {fixed}"
        return [(line, STILL_FAILING + 1 if first is None else first)]
    if not last.failed:  # the span ends before the last run's result
        state = f"{_failure(failed[-1])}; its last run has no result yet"
    else:
        state = _failure(last)
    lines = [(f"{head}: {state} — not yet fixed", first or STILL_FAILING)]
    more = _more_failures(last)
    if more:
        lines.append((f"{name} {more}", STILL_FAILING + 2))
    return lines


def _failure(run: Run) -> str:
    # A run's outcome, with the last line it printed when no failure line says what failed.
    said = run.telling.split(": ", 1)[-1]
    if run.failures or not run.telling or said in run.outcome:
        return run.outcome
    return f"{run.outcome}; {run.telling}"


def _more_failures(run: Run) -> str:
    """The failure lines of ``run`` its outcome does not already quote: a few, and a count of
    the rest."""
    listed = [line for f in run.failures if (line := short(f, 160)) not in run.outcome]
    if not listed:
        return ""
    shown = listed[-_FAILURES_SHOWN:]
    left = len(listed) - len(shown)
    tally = f" (+{left} more not listed)" if left else ""
    return f"— its last run also printed: {'; '.join(shown)}{tally}"
