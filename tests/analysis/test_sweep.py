"""`sweep`: in-process, on an executor, on a real Dask LocalCluster; errors as rows; the cache."""

from __future__ import annotations

from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab import SWEEP_COLUMNS, ContextConfig, Transcript, sweep
from ctxlab.messages import ToolResultBlock, UserMessage
from tests.helpers import CountingCounter, bash_loop

MODEL = {"models": ["claude-sonnet-4-6"]}
"""The sessions' recorded model: their costs are its price (an unknown model is unpriced)."""


def _session(name: str, turns: int) -> Transcript:
    calls = (
        (f"grep -n err /srv/{name}/{n}.log", f"/srv/{name}/{n}.log:{100 + n}: error {n}\n" * 50)
        for n in range(turns)
    )
    return bash_loop(name, f"Task {name}.", calls, "Done.", system="You triage logs.", meta=MODEL)


SESSIONS = [_session("alpha", 14), _session("beta", 9)]
CONFIGS = {
    "ctxlab": ContextConfig.preset("ctxlab"),
    "agentscope": ContextConfig.preset("agentscope"),
}
WINDOWS = (6_000, 12_000)


def test_the_product_in_process() -> None:
    frame = sweep(SESSIONS, CONFIGS, WINDOWS, progress=False)
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    assert len(frame) == 2 * 2 * 2
    assert frame["error"].isna().all()
    first = frame.iloc[0]
    assert (first["session"], first["config"], first["window"]) == ("alpha", "ctxlab", 6_000)
    assert (frame["requests"] == frame["session"].map({"alpha": 15, "beta": 10})).all()
    small = frame[frame["window"] == 6_000]
    assert (small["compactions"] > 0).all() and (small["retention"] == 1.0).all()


def test_a_dask_local_cluster_gives_the_same_frame(cluster: tuple[Any, Any]) -> None:
    expected = sweep(SESSIONS, CONFIGS, WINDOWS, progress=False)
    frame = sweep(SESSIONS, CONFIGS, WINDOWS, executor=cluster[1], progress=False)
    pd.testing.assert_frame_equal(frame, expected)


def test_a_case_that_raises_is_a_row_with_its_error() -> None:
    broken = ContextConfig.model_construct(**{**ContextConfig().__dict__, "trigger_ratio": "high"})
    configs = {"good": ContextConfig(), "broken": broken}
    with ThreadPoolExecutor(2) as pool:
        frame = sweep(SESSIONS, configs, (6_000,), executor=pool, progress=False)
    bad = frame[frame["config"] == "broken"]
    assert len(bad) == 2 and bad["error"].str.contains("config is invalid").all()
    assert bad["requests"].isna().all()
    assert frame[frame["config"] == "good"]["error"].isna().all()


def test_explicit_cases_and_bad_names() -> None:
    frame = sweep(SESSIONS, CONFIGS, cases=[("beta", "agentscope", 6_000)], progress=False)
    assert frame[["session", "config", "window"]].values.tolist() == [["beta", "agentscope", 6_000]]
    with pytest.raises(ValueError, match="unknown sessions or configs"):
        sweep(SESSIONS, CONFIGS, cases=[("gamma", "ctxlab", 6_000)], progress=False)


def test_the_cache_computes_only_new_cases(tmp_path: Path) -> None:
    first = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    assert first.attrs["computed"] == 8 and first.attrs["cached"] == 0
    again = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    assert again.attrs["computed"] == 0 and again.attrs["cached"] == 8
    pd.testing.assert_frame_equal(again, first)
    changed = {**CONFIGS, "ctxlab": ContextConfig(trigger_ratio=0.5)}
    third = sweep(SESSIONS, changed, WINDOWS, cache_dir=tmp_path, progress=False)
    assert third.attrs["computed"] == 4  # the changed config's cases only
    edited = [_session("alpha", 15), SESSIONS[1]]  # another session content: another key
    assert (
        sweep(edited, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False).attrs["computed"] == 4
    )


class FirstThenFails(Executor):
    """Runs the first group; every later one fails with ``failure`` (the user pressed stop, a
    worker process died)."""

    def __init__(self, failure: BaseException) -> None:
        self.calls = 0
        self.failure = failure

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.calls += 1
        if self.calls == 1:
            future.set_result(fn(*args, **kwargs))
        else:
            future.set_exception(self.failure)
        return future


def test_an_interrupted_sweep_returns_what_finished() -> None:
    interrupting = FirstThenFails(KeyboardInterrupt())
    frame = sweep(SESSIONS, CONFIGS, WINDOWS, executor=interrupting, progress=False)
    assert frame.attrs["interrupted"] is True
    assert 0 < len(frame) < 8 and frame["error"].isna().all()


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxlab.__main__ import main

    paths = [SESSIONS[0].save(tmp_path / "alpha.jsonl"), SESSIONS[1].save(tmp_path / "beta.jsonl")]
    out = tmp_path / "sweep.csv"
    args = ["sweep", *map(str, paths), "--preset", "ctxlab", "--preset", "langchain"]
    assert main([*args, "--window", "6000", "--out", str(out), "--cache", str(tmp_path / "c")]) == 0
    frame = pd.read_csv(out)
    assert frame[["session", "config"]].values.tolist() == [
        ["alpha", "ctxlab"],
        ["alpha", "langchain"],
        ["beta", "ctxlab"],
        ["beta", "langchain"],
    ]
    assert main(["sweep", str(paths[0]), "--preset", "nope"]) == 2
    assert "unknown preset 'nope'" in capsys.readouterr().err


def test_the_cache_is_keyed_by_ctxlabs_version_and_the_sessions_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab.analysis import _sweep_cache as _sweep
    from ctxlab.messages import ToolSchema

    one = [SESSIONS[1]]
    assert sweep(one, CONFIGS, (6_000,), cache_dir=tmp_path, progress=False).attrs["computed"] == 2
    # Another session's tools: the replays count other schemas, so nothing may be served.
    schema = ToolSchema("grep", "Search files.", {"type": "object", "properties": {}})
    tooled = [Transcript("beta", MODEL, "You triage logs.", SESSIONS[1].messages, tools=(schema,))]
    assert (
        sweep(tooled, CONFIGS, (6_000,), cache_dir=tmp_path, progress=False).attrs["computed"] == 2
    )
    # Another version of ctxlab: its figures may differ, so nothing may be served either.
    monkeypatch.setattr(_sweep, "__version__", "99.0.0")
    assert sweep(one, CONFIGS, (6_000,), cache_dir=tmp_path, progress=False).attrs["computed"] == 2


def test_with_a_cache_dir_a_session_is_tokenized_once_across_sweeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spies: list[CountingCounter] = []

    def spy(model: str) -> CountingCounter:
        # The session's model's counter (`counter_for`), spied on.
        spies.append(CountingCounter())
        return spies[-1]

    monkeypatch.setattr("ctxlab.analysis._sweep.counter_for", spy)
    (one,) = SESSIONS[:1]
    result = next(b for m in one.messages for b in m.content if isinstance(b, ToolResultBlock))
    first = sweep([one], CONFIGS, (6_000,), cache_dir=tmp_path, progress=False)
    assert result.text in spies[-1].calls
    # Other configs: the cases are new, the session's counts are not.
    other = {"tight": ContextConfig(trigger_ratio=0.5)}
    second = sweep([one], other, (6_000,), cache_dir=tmp_path, progress=False)
    assert second.attrs["computed"] == 1 and result.text not in spies[-1].calls
    # The counts read back are the counts: the first config's figures do not change.
    again = sweep([one], CONFIGS, (6_000,), progress=False)
    assert again.equals(first)


def test_a_replay_that_fails_part_way_is_a_row_without_a_price_and_is_cached(
    tmp_path: Path,
) -> None:
    # Truncation cannot cut the one result over the window: its replay stops at that request.
    session = _session("gamma", 8)
    messages = list(session.messages)
    huge = "/srv/gamma/big.log:1: error\n" * 3_000
    messages[8] = UserMessage(content=(ToolResultBlock(tool_use_id="c3", content=huge),))
    session = Transcript("gamma", MODEL, session.system, tuple(messages))
    configs = {"ctxlab": ContextConfig(), "trunc": ContextConfig.preset("openai_truncation")}
    frame = sweep([session], configs, (6_000,), progress=False, cache_dir=tmp_path)
    rows = frame.set_index("config")
    assert rows.loc["trunc", "failed_at"] == rows.loc["trunc", "requests"] == 4
    assert pd.isna(rows.loc["ctxlab", "failed_at"]) and rows.loc["ctxlab", "requests"] == 9
    for column in ("tokens_sent", "cost", "cost_vs_baseline", "cost_vs_no_compaction"):
        assert pd.isna(rows.loc["trunc", column]) and rows.loc["ctxlab", column] > 0, column
    assert frame["error"].isna().all()  # a finished case: its figures are cached
    again = sweep([session], configs, (6_000,), progress=False, cache_dir=tmp_path)
    assert again.attrs["cached"] == 2 and again.attrs["computed"] == 0
    pd.testing.assert_frame_equal(again, frame, check_like=True)
