"""`ctxlab.sessions`: a folder of session files, one row per file — loaded or with its
problem — opened by the Lab and swept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ctxlab import ApproximateCounter, ContextConfig, sessions, sweep
from ctxlab.exceptions import UsageError
from ctxlab.io import SESSION_COLUMNS
from ctxlab.io._transcript import corpus_dir

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    (root / "codex" / "2026" / "02").mkdir(parents=True)
    (root / "gemini").mkdir()
    for source, target in [
        (
            FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl",
            root / "codex" / "2026" / "02",
        ),
        (FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl", root / "gemini"),
    ]:
        shutil.copy(source, target)
    shutil.copy(FIXTURES / "aider" / ".aider.chat.history.md", root)
    (root / "broken.jsonl").write_text('{"type": "user", "message": \n')
    (root / "notes.txt").write_text("not a session")  # not a session file: not listed
    (root / ".cache").mkdir()
    (root / ".cache" / "x.json").write_text("{}")  # a hidden folder: not listed
    openai = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    (root / "chat.json").write_text(json.dumps(openai))
    return root


def test_every_session_file_is_a_row_loaded_or_with_its_problem(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    frame = sessions(root, progress=False, workers=1)
    assert list(frame.columns) == list(SESSION_COLUMNS)
    by_name = {
        Path(p).name: row for p, row in zip(frame["path"], frame.to_dict("records"), strict=True)
    }
    assert sorted(by_name) == [
        ".aider.chat.history.md",
        "broken.jsonl",
        "chat.json",
        "rollout-2026-02-10T09-00-00-019a-demo.jsonl",
        "session-2026-03-02T10-00-4a1c.jsonl",
    ]
    codex = by_name["rollout-2026-02-10T09-00-00-019a-demo.jsonl"]
    assert (codex["format"], codex["models"], codex["requests"], codex["tool_calls"]) == (
        "codex",
        "gpt-5-codex",
        5,
        3,
    )
    assert codex["billed_input_tokens"] == 4_200 + 4_500 + 4_700
    assert codex["recorded_compactions"] == 1 and codex["skipped"] == 3
    assert pd.isna(codex["problem"])
    gemini = by_name["session-2026-03-02T10-00-4a1c.jsonl"]
    assert (gemini["format"], gemini["started"]) == ("gemini_cli", "2026-03-02T10:00:00Z")
    assert pd.isna(by_name["chat.json"]["billed_input_tokens"])
    assert by_name["chat.json"]["conversation_tokens"] > 0
    broken = by_name["broken.jsonl"]
    assert pd.isna(broken["format"]) and "(line 1: " in broken["problem"]
    assert "looks truncated" in broken["problem"]


def test_processes_give_the_same_rows(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    for n in range(30):  # enough files to read in parallel
        (root / f"chat{n}.json").write_text((root / "chat.json").read_text())
    alone = sessions(root, progress=False, workers=1)
    parallel = sessions(root, progress=False, workers=2)
    assert len(parallel) == 35
    assert parallel.drop(columns="modified").equals(alone.drop(columns="modified"))


async def test_a_row_opens_in_the_lab_and_the_frame_sweeps(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    frame = sessions(_folder(tmp_path), progress=False, workers=1)
    codex = frame[frame["format"] == "codex"].iloc[0]
    lab = await Lab.open(codex, context_window=32_000, counter=ApproximateCounter())
    assert len(lab.steps) == 5
    result = sweep(frame, {"default": ContextConfig()}, (32_000,), progress=False)
    assert len(result) == 4  # the four files that loaded; the broken one is left out


def test_a_path_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"):
        sessions(tmp_path / "missing")


def test_swe_agent_trajectories_are_listed(tmp_path: Path) -> None:
    # SWE-agent writes `<instance>.traj`: a folder of them is a folder of sessions.
    trajectories = sorted((corpus_dir() / "raw" / "swe_agent").rglob("*.traj"))
    if not trajectories:
        pytest.skip("no SWE-agent trajectories: set CTXLAB_CORPUS to the corpus folder")
    for path in trajectories:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    frame = sessions(tmp_path, progress=False, workers=1)
    assert sorted(Path(p).name for p in frame["path"]) == sorted(p.name for p in trajectories)
    assert (frame["format"] == "swe_agent").all() and frame["problem"].isna().all()


def test_a_row_says_what_its_file_holds_that_the_load_did_not_place(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    # A chat whose usage sits where the chat reader does not look (LangChain's metadata).
    lossy = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello",
         "response_metadata": {"token_usage": {"prompt_tokens": 7, "completion_tokens": 2}}},
    ]  # fmt: skip
    (root / "lossy.json").write_text(json.dumps(lossy))
    frame = sessions(root, progress=False, workers=1)
    by_name = {Path(p).name: u for p, u in zip(frame["path"], frame["unaccounted"], strict=True)}
    assert by_name["lossy.json"] == (
        "unaccounted: 1 usage field (at $[].response_metadata.token_usage)"
    )
    # The control: files whose loads place everything (or hold no JSON to walk) say nothing.
    assert pd.isna(by_name["chat.json"])
    assert pd.isna(by_name["rollout-2026-02-10T09-00-00-019a-demo.jsonl"])
    assert pd.isna(by_name[".aider.chat.history.md"])
    assert pd.isna(by_name["broken.jsonl"])  # (it did not load: its problem says why)
