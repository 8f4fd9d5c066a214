"""An audit of the offline handover against the raw messages it stands for, written apart from
the summarizer (it imports nothing of `ctxlab.pipeline` nor of `ctxlab.retention`: its own
reading of what a run did, from what the corpus really holds).

A shell run **failed** when its result is an error (Claude Code's ``is_error``), its exit status
is not 0 (``<returncode>`` of SWE-agent and mini-SWE-agent, Claude Code's ``Exit code N``, an
``exit code``/``exit status`` line), or its output shows a failure whatever the status: a
``Traceback``, an error line (``XError: …``, pytest's ``E   …``), a failing tally (``1
failed``, ``2 errors``, unittest's ``FAILED (``), ``command not found``, git's ``fatal:``.

The counts, per summary (`audit`):

- ``fixed``/``false_fixed``: "— fixed" claims, and those that are false — the last run of the
  command named failed, or it never failed then passed (a different command of the same
  prefix passed), or a later output (of any command) still prints its error line;
- ``ok``/``false_ok``: ``$ cmd  → ok`` lines, and those on a command every run of which failed;
- ``none_after_failure``: discoveries "none recorded" although a run of the span failed;
- ``outcomes``/``outcomes_kept``: the error lines of each command's last run in the span when
  it failed, and how many of them the request (summary and kept tail) still holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ctxlab.messages import ModelRequest
from tests.helpers import Message

_EDITOR = {"view", "create", "str_replace", "insert", "undo_edit"}
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_LINE = re.compile(r"^\s*(?:Exit code|exit code|exit status|Exit status):? (-?\d+)\s*$", re.M)
_ERROR = re.compile(
    r"^(?:E\s+)?((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Interrupt|Exit)\b(?::.*)?"
    r"|[\w.]+: command not found.*|.*: command not found|fatal: .*"
    r"|(?:FAILED|ERROR) \S+::\S+.*)$"
)
# A harness saying the command did not finish or did not run: mini-SWE-agent's timeout, SWE-agent's
# timeout and its syntax check (their templates' words).
_NOT_DONE = (
    "timed out and has been killed",
    "was cancelled because it took more than",
    "was NOT executed",
)
_TALLY = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|^FAILED \((?:failures|errors)=")


@dataclass(frozen=True)
class Run:
    """One shell run: its command (white space collapsed), where its result is, whether it
    failed, its error lines, and its output's lines (stripped)."""

    command: str
    at: int
    failed: bool
    errors: tuple[str, ...]
    lines: frozenset[str]


def collapse(text: str) -> str:
    return " ".join(text.split())


def _command(block_input: dict[str, object]) -> str | None:
    for key in ("command", "cmd", "script"):
        value = block_input.get(key)
        if isinstance(value, str) and value.strip():
            return None if value.strip() in _EDITOR else collapse(value)
    return None


def judge(output: str, is_error: bool) -> tuple[bool, tuple[str, ...]]:
    """(failed, error lines) of one run's output."""
    lines = [ln.strip() for ln in output.splitlines()]
    # An error line without pytest's ``E`` gutter (the line is what it says).
    matches = (_ERROR.match(ln) for ln in lines)
    errors = tuple(dict.fromkeys(collapse(m.group(1)) for m in matches if m))
    codes = _RETURNCODE.findall(output) or _EXIT_LINE.findall(output)
    failed = (
        is_error
        or (bool(codes) and int(codes[-1]) != 0)
        or "Traceback (most recent call last)" in output
        or any(words in output for words in _NOT_DONE)
        or bool(errors)
        or any(_TALLY.search(ln) for ln in lines)
    )
    return failed, errors


def runs(messages: Sequence[Message]) -> list[Run]:
    """Every shell run of ``messages`` whose result is there, in order."""
    calls: dict[str, str] = {}
    found: list[Run] = []
    for index, message in enumerate(messages):
        for block in message.content:
            if block.type == "tool_use":
                command = _command(dict(block.input))
                if command is not None:
                    calls[block.id] = command
            elif block.type == "tool_result" and block.tool_use_id in calls:
                failed, errors = judge(block.text, bool(block.is_error))
                lines = frozenset(collapse(ln) for ln in block.text.splitlines())
                found.append(Run(calls.pop(block.tool_use_id), index, failed, errors, lines))
    return found


@dataclass
class Audit:
    """The counts of one or many summaries (see the module)."""

    fixed: int = 0
    false_fixed: list[str] = field(default_factory=list)
    ok: int = 0
    false_ok: list[str] = field(default_factory=list)
    none_after_failure: int = 0
    outcomes: int = 0
    outcomes_kept: int = 0
    lost: list[str] = field(default_factory=list)
    summaries: int = 0

    def add(self, other: Audit) -> None:
        self.fixed += other.fixed
        self.false_fixed += other.false_fixed
        self.ok += other.ok
        self.false_ok += other.false_ok
        self.none_after_failure += other.none_after_failure
        self.outcomes += other.outcomes
        self.outcomes_kept += other.outcomes_kept
        self.lost += other.lost
        self.summaries += other.summaries

    @property
    def kept_share(self) -> float | None:
        return self.outcomes_kept / self.outcomes if self.outcomes else None


_CLAIM = re.compile(r"^`([^`]+)`")
_OK = re.compile(r"^(?:Last action: )?\$ (.+?) {1,2}→ ok$")


def _named(name: str, history: list[Run]) -> list[Run]:
    # A name cut with " …" stands for every command it begins.
    if name.endswith(" …"):
        prefix = name[: -len(" …")]
        return [r for r in history if r.command.startswith(prefix)]
    return [r for r in history if r.command == name]


def false_fixed(line: str, history: list[Run]) -> str | None:
    """Why a "— fixed" line is false, or None when it holds."""
    shown = _CLAIM.match(line)
    named = _named(shown.group(1), history) if shown else []
    if not named:
        return "names no command run"
    for command in dict.fromkeys(r.command for r in named):
        own = [r for r in named if r.command == command]
        if own[-1].failed:
            return f"the last run of `{command[:60]}` failed"
    if not any(r.failed for r in named):
        return "no run of it failed"
    for command in dict.fromkeys(r.command for r in named):
        own = [r for r in named if r.command == command]
        fail = next((r for r in reversed(own) if r.failed), None)
        if fail is None:
            continue
        if not any(r.at > fail.at and not r.failed for r in own):
            return f"`{command[:60]}` never passed after it failed"
        later = [r for r in history if r.at > own[-1].at]
        for error in fail.errors:
            if any(error in r.lines for r in later):
                return f"a later output still prints {error[:80]!r}"
    return None


def audit(
    summary: dict[str, str],
    history: Sequence[Message],
    span: Sequence[Message],
    request_text: str,
) -> Audit:
    """One summary's counts: ``history`` is every message it stands for, ``span`` the ones
    this compaction took in, ``request_text`` all the text of the request that follows."""
    result = Audit(summaries=1)
    done = runs(history)
    for line in summary.get("important_discoveries", "").splitlines():
        if "— fixed" in line:
            result.fixed += 1
            why = false_fixed(line, done)
            if why is not None:
                result.false_fixed.append(f"{why}: {line[:160]}")
    for name in ("context_to_preserve", "current_state"):
        for line in summary.get(name, "").splitlines():
            ok = _OK.match(line)
            if ok:
                result.ok += 1
                own = [r for r in done if r.command == collapse(ok.group(1))]
                if own and all(r.failed for r in own):
                    result.false_ok.append(line[:160])
    mine = runs(span)
    if any(r.failed for r in mine) and summary.get("important_discoveries") == "none recorded":
        result.none_after_failure += 1
    held = collapse(request_text)
    for error in failing_outcomes(mine):
        result.outcomes += 1
        result.outcomes_kept += error in held
        if error not in held:
            result.lost.append(error)
    return result


def failing_outcomes(span_runs: Iterable[Run]) -> list[str]:
    """The error lines of each command's last run, when that run failed."""
    last: dict[str, Run] = {}
    for run in span_runs:
        last[run.command] = run
    return list(dict.fromkeys(e for r in last.values() if r.failed for e in r.errors))


def request_text(request: ModelRequest | None) -> str:
    """Every text the request holds (the audit's own reading: texts, results, call inputs)."""
    if request is None:
        return ""
    parts = [request.system]
    for message in request.messages:
        for block in message.content:
            if block.type == "tool_use":
                parts.extend(str(v) for v in block.input.values())
            elif hasattr(block, "text"):
                parts.append(block.text)
    return "\n".join(parts)
