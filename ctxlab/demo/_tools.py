"""Workspace tools: list, read, grep, edit files and run the tests, confined to one folder.

Used by the demo agent and useful on their own. Every path is resolved inside the workspace; one
that would leave it (``..``, an absolute path elsewhere, a symlink out) is refused with an error
result, never followed. ``grep`` runs the model's pattern under a time limit
(`ctxlab.util._model_pattern`): one that backtracks without end gets an error result saying so.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

from ctxlab.agent import Tool
from ctxlab.util._files import write_atomic
from ctxlab.util._model_pattern import ModelPattern, time_limit
from ctxlab.util._path_args import path_argument
from ctxlab.util._paths import resolved_within

__all__ = ["workspace_tools"]

_DURATION = re.compile(r"^(Ran \d+ tests?) in [0-9.]+s$", re.MULTILINE)
_SKIP = {".git", "__pycache__", ".venv", "context_offload", "large_tool_results", ".ctxlab-demo"}


def _search(base: Path, start: Path, pattern: ModelPattern) -> list[str]:
    files = [start] if start.is_file() else sorted(start.rglob("*"))
    hits = []
    for file in files:
        if not file.is_file() or _SKIP.intersection(file.relative_to(base).parts):
            continue
        if resolved_within(base, file) is None:
            continue  # a link out of the workspace: its lines are not the workspace's
        try:
            text = file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.search(line):
                hits.append(f"{file.relative_to(base)}:{number}: {line}")
    return hits


def workspace_tools(
    root: str | os.PathLike[str], *, test_timeout: float = 60.0, grep_timeout: float = 2.0
) -> list[Tool]:
    """The tools ``list_files``, ``read_file``, ``grep``, ``edit_file`` and ``run_tests``.

    ``test_timeout``: seconds a test run may take. ``grep_timeout``: seconds of matching one
    ``grep`` may spend over all the lines it reads (processor time): a pattern that backtracks
    past it gets an error result telling the model to simplify it."""
    # Five tools over the workspace root, kept together so each one's docstring (what the
    # model reads) sits next to the others; their work is in the functions below.
    grep_seconds = time_limit(grep_timeout, "grep_timeout")
    base = path_argument(root, "root", what="the workspace folder").resolve()

    def list_files(path: str = ".") -> str:
        """List the files under a folder of the workspace, with their sizes.

        Args:
            path: The folder, relative to the workspace.
        """
        return _listing(base, _inside(base, path))

    def read_file(path: str, offset: int = 0, limit: int = 400) -> str:
        """Read a text file of the workspace, with line numbers.

        Args:
            path: The file, relative to the workspace.
            offset: The first line to show (0-based).
            limit: How many lines to show at most.
        """
        return _numbered(_inside(base, path), offset, limit)

    def grep(pattern: str, path: str = ".") -> str:
        """Search the workspace's text files for a regular expression; one line per match.

        Args:
            pattern: A Python regular expression.
            path: A file or folder, relative to the workspace.
        """
        hits = _search(base, _inside(base, path), ModelPattern(pattern, grep_seconds))
        return "\n".join(hits) or f"no match for {pattern!r}"

    def edit_file(path: str, old: str, new: str) -> str:
        """Replace one exact occurrence of ``old`` with ``new`` in a file of the workspace.

        Args:
            path: The file, relative to the workspace.
            old: The exact text to replace; it must occur exactly once.
            new: The replacement.
        """
        return _replace_once(_inside(base, path), path, old, new)

    def run_tests() -> str:
        """Run the project's unit tests (python -m unittest, verbose) and return their output."""
        return _unit_tests(base, test_timeout)

    made = [Tool.from_function(f) for f in (list_files, read_file, grep, edit_file, run_tests)]
    return _movable(made, test_timeout, grep_seconds)


def _movable(made: list[Tool], test_timeout: float, grep_timeout: float) -> list[Tool]:
    """``made``, each tool able to be made again over another copy of the workspace."""
    for made_tool in made:
        # A fork's branch gets the same tool over its own copy of the workspace. A module-level
        # function (not a closure): a Dask worker unpickles it by name.
        made_tool.for_workspace = functools.partial(
            _tool_in, made_tool.name, test_timeout, grep_timeout
        )
    return made


def _inside(base: Path, path: str) -> Path:
    """``path`` (relative to the workspace ``base``) resolved; a `PermissionError` (an error
    result for the model) when it leads out of the workspace."""
    target = resolved_within(base, base / path)
    if target is None:
        msg = f"{path!r} is outside the workspace; use a path relative to it"
        raise PermissionError(msg)
    return target


def _tool_in(name: str, test_timeout: float, grep_timeout: float, root: Path) -> Tool:
    """Tool ``name`` of `workspace_tools` over ``root``."""
    made = workspace_tools(root, test_timeout=test_timeout, grep_timeout=grep_timeout)
    return next(t for t in made if t.name == name)


def _listing(base: Path, folder: Path) -> str:
    """Every file under ``folder`` (but the skipped ones), relative to ``base``, with its size."""
    rows = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
        for name in sorted(n for n in filenames if n not in _SKIP):
            file = Path(dirpath) / name
            rows.append(f"{file.relative_to(base)}  ({file.stat().st_size} bytes)")
    return "\n".join(rows) or "(no files)"


def _numbered(file: Path, offset: int, limit: int) -> str:
    """Up to ``limit`` lines of ``file`` from line ``offset`` (0-based), numbered from 1, and
    how many more there are."""
    lines = file.read_text(encoding="utf-8").splitlines()
    shown = lines[offset : offset + limit]
    body = "\n".join(f"{offset + i + 1:5d}  {line}" for i, line in enumerate(shown))
    rest = len(lines) - offset - len(shown)
    return body + (f"\n... {rest} more lines (use offset={offset + limit})" if rest > 0 else "")


def _replace_once(file: Path, path: str, old: str, new: str) -> str:
    """``file`` with its one occurrence of ``old`` replaced by ``new`` (written atomically); a
    `ValueError` telling the model to give a unique snippet when ``old`` is not there once."""
    text = file.read_text(encoding="utf-8")
    count = text.count(old)
    if count != 1:
        msg = f"{old!r} occurs {count} times in {path}; give a longer, unique snippet"
        raise ValueError(msg)
    write_atomic(file, text.replace(old, new), what="edited file")
    return f"edited {path}: replaced {len(old)} characters with {len(new)}"


def _unit_tests(base: Path, timeout: float) -> str:
    """Run ``python -m unittest discover`` in ``base``: the verdict first, then the output."""
    completed = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", "."],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    # The run's duration goes: forks compare their contexts, and a clock in a tool's output
    # would make two identical runs differ ("Ran 92 tests in 0.012s").
    output = _DURATION.sub(r"\1", completed.stderr + completed.stdout)
    # The verdict goes first: a long log may be cut, and the model must still see it.
    ran = next((ln for ln in output.splitlines() if ln.startswith("Ran ")), "Ran ? tests")
    verdict = next(
        (ln for ln in reversed(output.splitlines()) if ln.startswith(("OK", "FAILED"))),
        "no verdict",
    )
    failed = re.findall(r"^(?:FAIL|ERROR): (\w+)", output, re.MULTILINE)
    listed = f"; failing: {', '.join(failed)}" if failed else ""
    return (
        f"exit status {completed.returncode}: {ran}, {verdict}{listed}\n"
        f"$ python -m unittest discover -v -s tests -t .\n{output}"
    )
