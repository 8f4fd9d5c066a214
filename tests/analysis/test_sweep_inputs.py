"""What `sweep` takes and how it groups it, checked directly on the values a caller relies on
(fast: most without a replay): the frame of `ctxlab.sessions` (a file that did not load is
left out), a second session of one name renamed with everything else kept, each case a checked
triple, the windows of a session that need the same configs run as one task, the longest
sessions first on an executor, a task that was lost one row per case with its reason."""

from __future__ import annotations

import re
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab import ContextConfig, Transcript, sweep
from ctxlab.analysis import _sweep, _sweep_cases
from ctxlab.exceptions import UsageError
from ctxlab.messages import ProviderUsage, ToolSchema
from tests.analysis.test_sweep import CONFIGS, SESSIONS, _session


def _saved(tmp_path: Path, *transcripts: Transcript) -> list[Path]:
    return [t.save(tmp_path / f"{t.name}.jsonl") for t in transcripts]


def test_a_sessions_frame_gives_its_files_that_loaded(tmp_path: Path) -> None:
    paths = _saved(tmp_path, *SESSIONS)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    frame = pd.DataFrame(
        {"path": [str(paths[0]), str(broken), str(paths[1])], "problem": [None, "bad", None]}
    )
    loaded = _sweep_cases.sweep_sessions(frame)
    assert [t.name for t in loaded] == ["alpha", "beta"]
    assert [t.messages for t in loaded] == [s.messages for s in SESSIONS]
    # A frame without ``problem`` (a user's own list of paths): every row is read.
    loaded = _sweep_cases.sweep_sessions(pd.DataFrame({"path": [str(paths[1]), str(paths[0])]}))
    assert [t.name for t in loaded] == ["beta", "alpha"]


def test_sweep_reads_the_frame_of_sessions(tmp_path: Path) -> None:
    from ctxlab import sessions

    _saved(tmp_path, SESSIONS[1])
    (tmp_path / "empty.jsonl").write_text("")
    listing = sessions(tmp_path, progress=False, workers=1)
    assert listing["problem"].notna().sum() == 1
    frame = sweep(listing, {"ctxlab": CONFIGS["ctxlab"]}, (6_000,), progress=False)
    assert frame["session"].tolist() == ["beta"] and frame["requests"].tolist() == [10]


def test_a_second_session_of_one_name_is_renamed_and_nothing_else_changes() -> None:
    schema = ToolSchema("grep", "Search files.", {"type": "object", "properties": {}})
    twin = Transcript(
        "alpha",
        {"source": "claude_code"},
        "another system",
        SESSIONS[1].messages,
        {"cwd": "/srv"},
        (schema,),
        {2: ProviderUsage(input_tokens=900, output_tokens=12)},
    )
    third = Transcript("alpha", {}, "x", SESSIONS[1].messages)
    first, second, last = _sweep_cases.sweep_sessions([SESSIONS[0], twin, third])
    assert first is SESSIONS[0]
    assert (second.name, last.name) == ("alpha#2", "alpha#3")
    assert (second.meta, second.system, second.messages, second.extra) == (
        twin.meta,
        twin.system,
        twin.messages,
        twin.extra,
    )
    assert (second.tools, second.usage) == (twin.tools, twin.usage)


def test_each_case_is_a_checked_triple() -> None:
    assert _sweep_cases.case_of(["alpha", "ctxlab", 6_000]) == ("alpha", "ctxlab", 6_000)
    assert _sweep_cases.case_of((1, 2, 6_000.0)) == ("1", "2", 6_000)
    for bad in [("alpha", "ctxlab"), ("alpha", "ctxlab", 1, 2), "abc", None]:
        with pytest.raises(UsageError) as caught:
            _sweep_cases.case_of(bad)
        assert str(caught.value) == (
            f"each case is a (session name, config name, window) triple, got {bad!r}"
        )
    with pytest.raises(UsageError) as caught:
        _sweep_cases.case_of(("alpha", "ctxlab", 0))
    assert str(caught.value).startswith("a case's window must be a whole number of tokens")


def test_the_wanted_cases_are_the_product_in_order_or_the_named_ones() -> None:
    sessions = {"a": SESSIONS[0], "b": SESSIONS[1]}
    configs = {"x": ContextConfig(), "y": ContextConfig()}
    assert _sweep_cases.wanted_cases(sessions, configs, (1_000, 2_000), None) == [
        ("a", "x", 1_000),
        ("a", "x", 2_000),
        ("a", "y", 1_000),
        ("a", "y", 2_000),
        ("b", "x", 1_000),
        ("b", "x", 2_000),
        ("b", "y", 1_000),
        ("b", "y", 2_000),
    ]
    assert _sweep_cases.wanted_cases(sessions, configs, (1_000,), [("b", "y", 5)]) == [
        ("b", "y", 5)
    ]
    with pytest.raises(UsageError) as caught:
        _sweep_cases.wanted_cases(
            sessions,
            configs,
            (1_000,),
            [("b", "z", 5), ("c", "x", 5), ("a", "x", 5), ("d", "x", 5), ("e", "x", 5)],
        )
    assert str(caught.value) == (
        "cases name unknown sessions or configs: [('b', 'z', 5), ('c', 'x', 5), ('d', 'x', 5)]"
    )
    for some_sessions, some_configs in [(sessions, {}), ({}, configs)]:
        with pytest.raises(UsageError) as caught:
            _sweep_cases.wanted_cases(some_sessions, some_configs, (1_000,), None)
        assert str(caught.value) == "sweep needs at least one session and one named config"


def test_windows_that_need_the_same_configs_are_one_task() -> None:
    x, y = ContextConfig(), ContextConfig(trigger_ratio=0.5)
    pending = {
        ("a", 1_000): {"x": x, "y": y},
        ("a", 2_000): {"x": x, "y": y},
        ("a", 3_000): {"y": y},  # cached for x: another task
        ("b", 1_000): {"x": x, "y": y},
    }
    groups = _sweep._by_session(pending)
    assert [(s, w, list(c)) for s, w, c in groups] == [
        ("a", (1_000, 2_000), ["x", "y"]),
        ("a", (3_000,), ["y"]),
        ("b", (1_000,), ["x", "y"]),
    ]
    assert groups[1][2]["y"] is y


def test_a_lost_task_is_a_row_per_case_with_its_reason() -> None:
    group = ("alpha", (1_000, 2_000), {"x": ContextConfig(), "y": ContextConfig()})
    rows = _sweep._lost(group, RuntimeError("worker died"))
    error = (
        "not computed: RuntimeError: worker died (the worker or cluster running it was lost; "
        "sweep again — the finished cases are cached when cache_dir is given)"
    )
    assert rows == [
        {"session": "alpha", "config": "x", "window": 1_000, "error": error},
        {"session": "alpha", "config": "y", "window": 1_000, "error": error},
        {"session": "alpha", "config": "x", "window": 2_000, "error": error},
        {"session": "alpha", "config": "y", "window": 2_000, "error": error},
    ]


class Recording(Executor):
    """Runs each task at once, keeping the order they were submitted in."""

    def __init__(self) -> None:
        self.sessions: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.sessions.append(args[0].name)
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_on_an_executor_the_longest_sessions_go_first() -> None:
    short, long, middle = _session("short", 2), _session("long", 6), _session("middle", 4)
    pool = Recording()
    frame = sweep(
        [short, long, middle],
        {"ctxlab": CONFIGS["ctxlab"]},
        (6_000,),
        executor=pool,
        progress=False,
    )
    assert pool.sessions == ["long", "middle", "short"]
    # The frame keeps the order the sessions were given in.
    assert frame["session"].tolist() == ["short", "long", "middle"]
    # A session at two windows weighs twice: it goes before a longer one at one window.
    pool = Recording()
    sweep(
        [long, middle],
        {"ctxlab": CONFIGS["ctxlab"]},
        cases=[("long", "ctxlab", 6_000), ("middle", "ctxlab", 6_000), ("middle", "ctxlab", 7_000)],
        executor=pool,
        progress=False,
    )
    assert pool.sessions == ["middle", "long"]


def test_a_store_that_cannot_be_opened_is_said_not_raised(tmp_path: Path) -> None:
    assert _sweep._open_store(None) == (None, None)
    assert _sweep._open_store("") == (None, None)
    damaged = tmp_path / "counts.sqlite"
    damaged.write_bytes(b"x" * 4_096)
    store, problem = _sweep._open_store(str(damaged))
    assert store is None and problem is not None and "not a ctxlab count store" in problem
    good, none = _sweep._open_store(str(tmp_path / "new.sqlite"))
    assert good is not None and none is None
    good.close()


def test_figures_are_plain_python_values() -> None:
    import numpy as np

    assert _sweep._plain(pd.NA) is None
    value = _sweep._plain(np.int64(7))
    assert value == 7 and type(value) is int
    assert type(_sweep._plain(np.float64(0.5))) is float
    assert _sweep._plain("x") == "x"


def test_a_session_with_more_configs_weighs_more() -> None:
    long, middle = _session("long", 6), _session("middle", 4)
    pool = Recording()
    two = {"a": CONFIGS["ctxlab"], "b": CONFIGS["agentscope"]}
    sweep(
        [long, middle],
        two,
        cases=[("long", "a", 6_000), ("middle", "a", 6_000), ("middle", "b", 6_000)],
        executor=pool,
        progress=False,
    )
    assert pool.sessions == ["middle", "long"]  # 10 messages × 2 configs > 14 × 1


def test_the_progress_bar_counts_cases(capsys: pytest.CaptureFixture[str]) -> None:
    two = {"a": CONFIGS["ctxlab"], "b": CONFIGS["agentscope"]}
    sweep([SESSIONS[1]], two, (6_000, 7_000), progress=True)
    bar = capsys.readouterr().err
    assert re.search(r" 4/4 \[[^\]]*case/s\]", bar), bar
    sweep([SESSIONS[1]], two, (6_000,), progress=False)
    assert capsys.readouterr().err == ""
    sweep([SESSIONS[1]], two, (6_000,))  # on by default
    assert " 2/2 [" in capsys.readouterr().err


def test_a_renamed_session_keeps_its_clock() -> None:
    # The second session of one name is renamed: its times (its cache's clock) go with it, so
    # its idle hour costs the re-write as the first one's does.
    from tests.analysis.test_whatif_clock import _session as logs
    from tests.analysis.test_whatif_clock import _timed

    idle = _timed(logs(), {6: 3_600.0})
    configs = {"ctxlab": CONFIGS["ctxlab"]}
    frame = sweep([idle, idle, logs()], configs, (200_000,), progress=False)
    costs = frame.set_index("session")["cost"]
    assert costs["logs"] == costs["logs#2"]
    assert costs["logs"] > costs["logs#3"] > 0
