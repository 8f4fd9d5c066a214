"""What the demo model reads: a test run's verdict from its output, a file named in a prompt."""

from __future__ import annotations

import re

__all__ = ["file_named", "run_verdict"]


def run_verdict(output: str) -> str:
    """What a unittest run printed, in a few words: ``3 tests, OK`` (``no test summary``)."""
    first = re.search(r"^exit status \d+: Ran (\d+) tests?.*?, (OK.*|FAILED.*)$", output, re.M)
    if first:
        return f"{first.group(1)} tests, {first.group(2).split(';')[0]}"
    ran = re.search(r"^Ran (\d+) tests?", output, re.MULTILINE)
    status = re.search(r"^(OK.*|FAILED.*)$", output, re.MULTILINE)
    if not ran or not status:
        return "no test summary"
    return f"{ran.group(1)} tests, {status.group(1)}"


_PATH_RUN = re.compile(r"[\w./-]+")
_FILE_END = re.compile(r"\.(?:py|md|html|txt|csv|log|cfg|toml)\b")


def file_named(prompt: str) -> str | None:
    """The first file name in a prompt: the longest start of a run of path characters that
    ends in a known extension. Run by run, in time linear in the prompt (one pattern over a
    long run of dashes took the square of its length)."""
    for run in _PATH_RUN.finditer(prompt):
        ends = [m.end() for m in _FILE_END.finditer(run.group()) if m.start() > 0]
        if ends:
            return run.group()[: ends[-1]]
    return None
