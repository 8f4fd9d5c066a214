"""The fast counter's vocabulary is built once per process, on a background thread from the
moment a session is loaded (`preload`), and a counter that asks meanwhile waits for that build
rather than making a second; `sessions` (which counts nothing exactly) does not start it, and a
fork during a build leaves the child able to count."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import ctxlab.io._load
import ctxlab.io._transcript
from ctxlab.io import load, sessions
from ctxlab.tokens import ToktokCounter, _toktok, preload, toktok_available

requires_toktok = pytest.mark.skipif(
    not toktok_available(), reason="toktok-rs not installed: pip install 'ctxlab[fast]'"
)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each build of a vocabulary, by the name of the thread that made it (slowed, so that a
    counter asking meanwhile meets it in progress); toktok's own cache emptied first."""
    import toktok

    made: list[str] = []
    real = toktok._Tokenizer

    def slow(*args: Any) -> Any:
        made.append(threading.current_thread().name)
        time.sleep(0.3)
        return real(*args)

    monkeypatch.setattr(toktok, "_CACHE", {})
    monkeypatch.setattr(toktok, "_Tokenizer", slow)
    monkeypatch.setattr(_toktok, "_PRELOADING", set())
    return made


@requires_toktok
def test_a_counter_waits_for_the_preload_instead_of_building_again(builds: list[str]) -> None:
    preload("o200k_base")
    preload("o200k_base")  # started once
    started = time.perf_counter()
    counter = ToktokCounter("o200k_base")  # the build is still under way: waits for it
    waited = time.perf_counter() - started
    assert builds == ["ctxlab-preload-o200k_base"]
    assert waited > 0.1  # it did wait for the build, not find a half-made one
    assert counter.count_text("hello world") == 2


@requires_toktok
def test_loading_a_session_starts_the_build_and_sessions_does_not(
    builds: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    for module in (ctxlab.io._load, ctxlab.io._transcript):
        monkeypatch.setattr(
            module, "preload", lambda encoding="cl100k_base": started.append(encoding)
        )
    path = tmp_path / "one.jsonl"
    lines = [{"type": "meta"}, {"role": "user", "content": "hi"}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    sessions(tmp_path, workers=1, progress=False)
    assert started == []
    load(path)
    assert started == ["cl100k_base"]
    ctxlab.io._transcript.load_transcript(path)
    assert started == ["cl100k_base", "cl100k_base"]


def _count_in_child(queue: Any) -> None:
    queue.put(ToktokCounter("cl100k_base").count_text("hello world"))


@requires_toktok
def test_a_fork_during_a_build_leaves_the_child_able_to_count() -> None:
    # The parent holds the build's lock (as a preload mid-build does) when it forks.
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    with _toktok._LOCKS["cl100k_base"]:
        child = context.Process(target=_count_in_child, args=(queue,))
        child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung on the lock its parent held")
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 2
