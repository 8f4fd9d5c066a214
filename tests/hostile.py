"""What the hostile-input tests of several packages share: a file or folder made read-only for
real (root ignores permission bits), a file's bytes and a folder's listing to compare before and
after, and a check that a message names the problem and the fix."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` (a file or a folder) read-only while the block runs — for root too, whom
    permission bits do not stop: then the file is made immutable (``chattr +i``), and the test
    is skipped with the reason where that is not possible."""
    if os.geteuid() != 0:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(mode & ~0o222)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    done = (
        subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False)
        if chattr
        else None
    )
    if done is None or done.returncode != 0:
        pytest.skip("root ignores permission bits and chattr +i is not available here")
    try:
        yield path
    finally:
        subprocess.run([str(chattr), "-i", str(path)], capture_output=True, check=True)


def listing(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder): what a test compares to
    show that nothing was written, moved or left behind."""
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
    }


def says(message: str, *parts: str) -> None:
    """``message`` holds every one of ``parts`` (case-insensitive): the problem and the fix."""
    lowered = message.lower()
    missing = [p for p in parts if p.lower() not in lowered]
    assert not missing, f"the message does not say {missing}: {message!r}"
