"""The handover's discoveries: every command that failed, once, and whether it is fixed.

A run failed when it exited non-zero, was reported as an error, or printed a failure line or a
failing tally (`_span.Run`; one that exited 0 and printed a failure is said to have printed
one). A command is **fixed** only when its
last run passed after an earlier one failed and no later run (of any command) prints its failure
line again: a later run that fails differently is not a fix, nor one whose result the span ends
before (an earlier summary's "not yet fixed" stands). Commands are told apart whole: where a
name cut to its first words stands for several, it is fixed only when each of them is.
Otherwise it is **not yet fixed**, with what its last run printed: its status and newest
failure line, how many failure lines it printed, and the others below it, one a line, newest
first — so that when the budget leaves some out, the count says how many.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxlab.pipeline._span import Run, short

__all__ = ["DETAIL", "OTHERS_BELOW", "discoveries", "quoted_command"]

DETAIL = "  ↳ "
"""How a failure line under its command's line starts."""
OTHERS_BELOW = "failure lines, the others below"
"""How a command's line with failure lines under it ends."""
_DETAILS = 12
"""Failure lines listed under a still-failing command at most (its line counts them all)."""
_FAILURE_CHARS = 300  # a failure line is quoted whole up to this (cut at a word end past it)
_NAME = 120  # characters of a command shown (cut at a word end)
_QUOTED = re.compile(r"^`([^`]+)`")

STILL_FAILING = 2
"""The rank (`_handover`'s order when space is short) of a command still failing: with the
edits and the intent, before everything else."""
CARRIED = 6
"""The rank of an earlier summary's line about a command this span did not run."""

Line = tuple[str, float]  # a discovery line and its rank


def _name(command: str) -> str:
    return f"`{short(command, _NAME)}`"


def quoted_command(line: str) -> str:
    """The command a discovery line names (in backticks, at its start), as `discoveries`
    writes it; "" for any other line."""
    match = _QUOTED.match(line)
    return f"`{match.group(1)}`" if match else ""


def discoveries(runs: list[Run], earlier: list[str]) -> tuple[list[Line], list[Line]]:
    """The discovery lines of an earlier summary (``earlier``) carried forward, then those of
    ``runs`` (in order of each command's first run), each with its rank. An earlier line about
    a command these runs ran again is superseded (its failure lines with it): by this span's
    line when it failed here, or said fixed when it only passed here and no later run printed
    its failure again."""
    by_command: dict[str, list[Run]] = {}
    for run in runs:
        by_command.setdefault(_name(run.command), []).append(run)
    carried = _carried(earlier, by_command, runs)
    # The command that failed last is said whatever else gives way: a span where something
    # failed never reads "none recorded".
    latest = next((_name(r.command) for r in reversed(runs) if r.failed), None)
    lines: list[Line] = []
    for name, runs_of in by_command.items():
        failed = [r for r in runs_of if r.failed]
        if failed:
            first = STILL_FAILING - 1 if name == latest else None
            lines.extend(_lines(name, runs_of, failed, first, runs))
    return carried, lines


def _printed_after(run: Run, failures: Iterable[str], runs: list[Run]) -> Run | None:
    """The first run after ``run`` (of any command) that prints one of ``failures`` again."""
    wanted = set(failures)
    at = next(i for i, r in enumerate(runs) if r is run)
    return next((r for r in runs[at + 1 :] if wanted.intersection(r.failures)), None)


def _reprinted(runs: list[Run], every: list[Run]) -> Run | None:
    """The first run (of any command) that prints again a failure of one of the commands a
    name stands for, after that command's own last run: each is checked from its own last run,
    so another command's later pass under the same cut name does not hide a reprint."""
    final: dict[str, Run] = {}
    failures: dict[str, tuple[str, ...]] = {}
    for run in runs:
        final[run.command] = run
        if run.failed:
            failures[run.command] = tuple(run.failures)
    # Positions by identity: runs are values, and two alike (a command run twice with the same
    # output) must not be taken for one another.
    at = {id(r): n for n, r in enumerate(every)}
    found = [_printed_after(final[c], f, every) for c, f in failures.items()]
    return min((r for r in found if r is not None), key=lambda r: at[id(r)], default=None)


def _still(line: str, last: Run, runs: list[Run]) -> Run | None:
    # A later run printing a failure line the earlier summary's line quotes.
    at = next(i for i, r in enumerate(runs) if r is last)
    return next((r for r in runs[at + 1 :] if any(f in line for f in r.failures)), None)


def _carried(earlier: list[str], by_command: dict[str, list[Run]], runs: list[Run]) -> list[Line]:
    failing = any(r.failed for r in runs)
    carried: list[Line] = []
    keep_details = False  # a failure line goes with the line of its command
    for line in earlier:
        if line.startswith(DETAIL):
            if keep_details:
                carried.append((line, CARRIED + 1))
            continue
        name = quoted_command(line)
        keep_details = name not in by_command
        if keep_details:
            carried.append(_reopened(line, runs))
        elif not any(r.failed for r in by_command[name]) and " — not yet fixed" in line:
            last = by_command[name][-1]
            # Run again, the span ends before its result, a later run prints its failure
            # again, or the name is cut (the run may be of another command it stands for):
            # still not yet fixed, as said.
            if last.outcome == "no result yet" or _still(line, last, runs) or name.endswith(" …`"):
                keep_details = True
                carried.append((line, STILL_FAILING))
            else:
                # Failed before this span (or an earlier piece of it), passed here: fixed —
                # news that goes first when nothing failed here.
                was = line.split(" — ", 1)[0]
                fixed = f"{was} — fixed: its last run passed ({last.outcome})"
                carried.append((fixed, STILL_FAILING - 1 if not failing else STILL_FAILING + 1))
    return carried


def _reopened(line: str, runs: list[Run]) -> Line:
    """An earlier summary's line about a command this span did not run; said fixed, it is
    not any more when a run of this span prints its failure again."""
    if " — fixed: " not in line:
        return line, CARRIED
    again = next((r for r in runs if any(f in line for f in r.failures)), None)
    if again is None:
        return line, CARRIED
    was = line.split(" — fixed: ", 1)[0]
    return f"{was}; `{short(again.command, 60)}` prints it again — not yet fixed", STILL_FAILING


def _holding(runs: list[Run]) -> Run:
    """The run that says where a name's commands stand: of the distinct commands a cut name
    stands for, the latest whose last run failed; else the name's last run."""
    last: dict[str, int] = {}
    for at, run in enumerate(runs):
        last[run.command] = at
    failing = [at for at in last.values() if runs[at].failed]
    return runs[max(failing)] if failing else runs[-1]


def _lines(
    name: str, runs: list[Run], failed: list[Run], first: int | None, every: list[Run]
) -> list[Line]:
    last = _holding(runs)
    # A command whose failing runs all exited 0 printed a failure: it did not fail to run.
    quiet = all(r.status.startswith("exit 0") for r in failed)
    head = f"{name} {'printed a failure' if quiet else 'failed'}"
    if len(runs) > 1:
        head += f" ({len(failed)} of {len(runs)} runs)"
    if not last.failed and last.outcome != "no result yet":
        again = _reprinted(runs, every)
        if again is None:
            fixed = f"fixed: its last run passed ({last.outcome})"
            line = f"{head}: {_failure(failed[-1])} — {fixed}"
            return [(line, STILL_FAILING + 1 if first is None else first)]
        still = f"its last run passed, but `{short(again.command, 60)}` still prints it"
        return [
            (f"{head}: {_failure(failed[-1])}; {still} — not yet fixed", first or STILL_FAILING)
        ]
    if not last.failed:  # the span ends before the last run's result
        return [
            (
                f"{head}: {_failure(failed[-1])}; its last run has no result yet — not yet fixed",
                first or STILL_FAILING,
            )
        ]
    others = [short(f, _FAILURE_CHARS) for f in last.failures[:-1]][::-1]
    count = f"; {len(last.failures)} {OTHERS_BELOW}" if others else ""
    lines: list[Line] = [
        (f"{head}: {_failure(last)} — not yet fixed{count}", first or STILL_FAILING)
    ]
    # One a line, newest first: the budget leaves out the oldest, and the count says so.
    lines.extend(
        (f"{DETAIL}{failure}", STILL_FAILING + 1 + n / 8)
        for n, failure in enumerate(others[:_DETAILS])
    )
    return lines


def _failure(run: Run) -> str:
    # A run's status and its newest failure line whole; with no failure line, the line that
    # tells most.
    if run.failures:
        failure = short(run.failures[-1], _FAILURE_CHARS)
        return f"{run.status}; {failure}" if run.status else failure
    said = run.telling.split(": ", 1)[-1]
    if not run.telling or said in run.outcome:
        return run.outcome
    return f"{run.outcome}; {run.telling}"
