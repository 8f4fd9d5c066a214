"""What the tests of the tables `sessions` keeps (in memory, on disk) start from: a folder of
fixture sessions with nothing kept yet, and a watch on reading — once it is set, a file
`sessions` reads fails and its row says "read again", so a table answered from what was kept
shows no such row."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import ctxlab.io._folder as folder_module
from ctxlab.exceptions import CtxlabError
from ctxlab.io._sessions_cache import forget

FIXTURES = Path(__file__).parents[1] / "fixtures"


def fixture_sessions(root: Path, formats: Iterable[str]) -> Path:
    """``root`` holding the fixture folder of each of ``formats``, with no table kept in
    memory (a test before it may have asked about a folder of the same name)."""
    for name in formats:
        shutil.copytree(FIXTURES / name, root / name)
    forget()
    return root


def _refuse(*_: Any, **__: Any) -> Any:
    msg = "read again"
    raise CtxlabError(msg)


def refuse_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session file read from now on fails, saying "read again" in its row."""
    monkeypatch.setattr(folder_module, "read", _refuse)
