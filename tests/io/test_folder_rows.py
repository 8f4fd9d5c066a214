"""`sessions`, file by file: which files of a folder are sessions (their endings in any case, not
in hidden folders, not a subagent's meta, not an OpenHands event beside its conversation, Markdown
only when it is a chat history) and what each row says — the figures read from the session's own
meta (models, start, skipped, repairs, compactions, billed input, its parent), or the reason it
did not load."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab import sessions
from ctxlab.exceptions import UsageError
from ctxlab.io._folder import session_row, session_rows

FIXTURES = Path(__file__).parents[1] / "fixtures"
MODIFIED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
MESSAGES = [
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "looking"},
            {"type": "tool_use", "id": "c1", "name": "grep", "input": {}},
            {"type": "tool_use", "id": "c2", "name": "ls", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "4"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "a.py"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
]


def _ctxlab_file(path: Path, meta: dict[str, Any], messages: list[Any] = MESSAGES) -> Path:
    # ctxlab's own format: its meta line is the session's meta, figures and all.
    lines = [{"type": "meta", **meta}, *messages]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (MODIFIED.timestamp(), MODIFIED.timestamp()))
    return path


def _listed(root: Path, **options: Any) -> list[str]:
    frame = sessions(root, progress=False, workers=1, **options)
    return sorted(Path(p).relative_to(root).as_posix() for p in frame["path"])


def test_a_rows_figures_are_the_sessions_own(tmp_path: Path) -> None:
    meta = {
        "source": "codex",
        "models": ["gpt-5", "gpt-5-mini"],
        "startTime": "2026-03-01T10:00:00Z",
        "skipped": {"reasoning": 2, "event_msg": 500, "odd": True, "negative": -1, "huge": 2**53},
        "repairs": ["a result without its call", "a repeated id"],
        "compactions": [{"at": 1}],
        "subagent_of": "parent-session",
        "usage": {"1": [100, 10, 1_000, 50], "3": [200, 20, 0, 0]},
    }
    row = session_row(_ctxlab_file(tmp_path / "one.jsonl", meta))
    assert row["problem"] is None and row["episode"] == 0
    assert (row["name"], row["format"], row["models"]) == ("one", "codex", "gpt-5, gpt-5-mini")
    assert row["started"] == "2026-03-01T10:00:00Z"
    assert (row["messages"], row["requests"], row["tool_calls"]) == (4, 2, 2)
    assert row["billed_input_tokens"] == (100 + 1_000 + 50) + 200  # input, cache read and write
    assert row["recorded_compactions"] == 1 and row["repairs"] == 2
    assert row["skipped"] == 2 + 500  # whole counts only, below 2**53
    assert row["subagent_of"] == "parent-session"
    assert row["modified"] == MODIFIED


def test_figures_a_session_does_not_record_are_empty_or_zero(tmp_path: Path) -> None:
    row = session_row(
        _ctxlab_file(tmp_path / "bare.jsonl", {"models": [], "started": 1_767_225_600})
    )
    assert row["format"] == "ctxlab"  # no source said: ctxlab's own
    assert row["models"] is None and row["started"] == 1_767_225_600  # or "started"
    assert row["billed_input_tokens"] is None  # no usage recorded, not zero billed
    assert (row["recorded_compactions"], row["repairs"], row["skipped"]) == (0, 0, 0)
    assert row["subagent_of"] is None
    odd = session_row(
        _ctxlab_file(
            tmp_path / "odd.jsonl",
            {"models": "gpt-5", "startTime": {"at": 1}, "skipped": [3], "repairs": "x"},
        )
    )
    assert (odd["models"], odd["started"], odd["skipped"], odd["repairs"]) == (None, None, 0, 0)


def test_the_conversations_size_grows_about_a_token_for_four_characters(tmp_path: Path) -> None:
    short = session_row(_ctxlab_file(tmp_path / "short.jsonl", {}))
    words = " ".join(f"w{n % 10}xy" for n in range(2_000))  # 10,000 characters
    longer = [*MESSAGES[:-1], {"role": "assistant", "content": [{"type": "text", "text": words}]}]
    long = session_row(_ctxlab_file(tmp_path / "long.jsonl", {}, longer))
    assert 0 < short["conversation_tokens"] < 100
    assert 1_500 <= long["conversation_tokens"] - short["conversation_tokens"] <= 4_000


def test_a_file_that_does_not_load_says_why(tmp_path: Path) -> None:
    gone = session_row(tmp_path / "gone.jsonl")
    assert gone["problem"] == "cannot read it: No such file or directory"
    assert gone["modified"] is None and gone["name"] == "gone"
    bad = _ctxlab_file(tmp_path / "bad.jsonl", {"usage": {"1": "many"}})
    row = session_row(bad)
    assert "meta.usage must map message indexes to four counts" in row["problem"]
    assert row["format"] is None and row["messages"] is None
    assert row["modified"] == MODIFIED


def test_which_files_are_sessions(tmp_path: Path) -> None:
    root = tmp_path / ".sessions"  # a hidden folder given is read; hidden ones inside are not
    for name in ("a.jsonl", "b.JSON", "c.traj", "d.af", "e.eval", "f.aider.llm.history"):
        _ctxlab_file(root / name, {})
    _ctxlab_file(root / ".git" / "x.jsonl", {})
    _ctxlab_file(root / "deep" / ".cache" / "y.json", {})
    _ctxlab_file(root / ".hidden.jsonl", {})  # a hidden file in a shown folder is listed
    (root / "notes.txt").write_text("not a session")
    agents = root / "s1" / "subagents"
    _ctxlab_file(agents / "agent-a1.jsonl", {})
    (agents / "agent-a1.meta.json").write_text('{"toolUseId": "t1"}')  # read with agent-a1
    _ctxlab_file(root / "s1" / "not-an-agent.meta.json", {})
    assert _listed(root) == [
        ".hidden.jsonl",
        "a.jsonl",
        "b.JSON",
        "c.traj",
        "d.af",
        "e.eval",
        "f.aider.llm.history",
        "s1/not-an-agent.meta.json",
        "s1/subagents/agent-a1.jsonl",
    ]
    assert _listed(root, suffixes=[".JSONL"]) == [
        ".hidden.jsonl",
        "a.jsonl",
        "s1/subagents/agent-a1.jsonl",
    ]


def test_markdown_is_listed_only_when_it_is_a_chat_history(tmp_path: Path) -> None:
    specstory = sorted((FIXTURES / "specstory").glob("2025-*.md"))[0]
    (tmp_path / "chat.md").write_bytes(specstory.read_bytes())
    (tmp_path / "x.aider.chat.history.md").write_text("# aider chat started at 2026-01-01\n")
    (tmp_path / "README.md").write_text("# A project\n\nNot a chat.\n")
    late = "# Notes\n\n" + "text\n" * 600 + "<!-- Generated by SpecStory -->\n_**User**_\n"
    (tmp_path / "late.md").write_text(late)  # told by its first bytes only
    assert _listed(tmp_path) == ["chat.md", "x.aider.chat.history.md"]


def test_openhands_v1_events_are_one_conversation_not_a_row_each(tmp_path: Path) -> None:
    event = "event-00000-0123abcd-0000-0000-0000-000000000000.json"
    conversation = tmp_path / "conv"
    (conversation / "events").mkdir(parents=True)
    (conversation / "base_state.json").write_text("{}")
    (conversation / "events" / event).write_text("{}")
    (conversation / "events" / "other.json").write_text("{}")  # not an event file's name
    loose = tmp_path / "loose" / "events"  # no base_state.json: the folder is the row
    loose.mkdir(parents=True)
    (loose / event).write_text("{}")
    not_events = tmp_path / "conv2"
    (not_events / "logs").mkdir(parents=True)
    (not_events / "base_state.json").write_text("{}")
    (not_events / "logs" / event).write_text("{}")  # in a folder not named events
    assert _listed(tmp_path) == [
        "conv/base_state.json",
        "conv/events/other.json",
        "conv2/base_state.json",
        f"conv2/logs/{event}",
        "loose",
    ]


@pytest.mark.parametrize("workers", [0, -2, True, 1.5, "2"])
def test_workers_must_be_a_whole_number_from_one(tmp_path: Path, workers: Any) -> None:
    with pytest.raises(UsageError, match=r"workers must be a whole number from 1 .*got "):
        sessions(tmp_path, workers=workers, progress=False)


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    path = _ctxlab_file(tmp_path / "a.jsonl", {})
    with pytest.raises(UsageError, match=r"a.jsonl' is not a folder; give a folder of session"):
        sessions(path, progress=False)


def test_an_empty_folder_is_an_empty_table_with_every_column(tmp_path: Path) -> None:
    frame = sessions(tmp_path, progress=False)
    assert frame.empty and str(frame["messages"].dtype) == "Int64"


def test_counts_are_whole_numbers_with_gaps(tmp_path: Path) -> None:
    _ctxlab_file(tmp_path / "ok.jsonl", {})
    (tmp_path / "broken.jsonl").write_text("{")
    frame = sessions(tmp_path, progress=False, workers=1).set_index("name")
    assert str(frame["requests"].dtype) == "Int64" and frame.loc["ok", "requests"] == 2
    assert pd.isna(frame.loc["broken", "requests"])


def test_a_subagent_held_in_its_sessions_file_is_a_row_of_its_own(tmp_path: Path) -> None:
    meta = {
        "subagents": [
            {"episode": 1},
            {"episode": 2, "file": "agent-x.jsonl"},
            {"episode": True},
            {"episode": -1},
            "junk",
        ]
    }
    path = _ctxlab_file(tmp_path / "s.jsonl", meta)
    rows = session_rows([path])[0]
    assert [r["episode"] for r in rows] == [0, 1]
    assert rows[1]["path"] == str(path)


def test_a_folder_path_that_cannot_be_looked_up_says_why(tmp_path: Path) -> None:
    long = tmp_path / ("x" * 300)  # a name no file system holds: shown cut, with its length
    with pytest.raises(UsageError) as caught:
        sessions(long, progress=False)
    assert str(caught.value) == (
        f"'{str(long)[:256]}… ({len(str(long))} characters)' is not a folder (a name of "
        f"{len(str(long))} characters is too long for a file path); give a folder of session files"
    )
    missing = tmp_path / "missing"
    with pytest.raises(UsageError) as caught:
        sessions(missing, progress=False)
    assert str(caught.value) == f"{str(missing)!r} is not a folder; give a folder of session files"


def test_a_read_that_fails_or_a_date_no_clock_holds_is_that_files_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctxlab.io._folder as folder

    path = _ctxlab_file(tmp_path / "s.jsonl", {})

    def failing(_path: Path, episode: int = 0) -> Any:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(folder, "read", failing)
    row = session_row(path)
    assert row["problem"] == "OSError: [Errno 5] Input/output error"
    assert (row["path"], row["name"], row["modified"], row["episode"]) == (
        str(path),
        "s",
        MODIFIED,
        0,
    )
    monkeypatch.undo()

    class Overflowing(datetime):
        @classmethod
        def fromtimestamp(cls, *args: Any, **kwargs: Any) -> Any:
            raise OverflowError("timestamp out of range for platform time_t")

    monkeypatch.setattr(folder, "datetime", Overflowing)
    row = session_row(path)
    assert row["problem"] == "cannot read it: timestamp out of range for platform time_t"
    assert row["modified"] is None and row["name"] == "s" and row["format"] is None


def test_a_session_whose_figures_fail_is_listed_loaded_with_that_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctxlab.io._folder as folder

    class Failing:
        def __init__(self, *_: Any) -> None:
            raise ValueError("an odd figure")

    monkeypatch.setattr(folder, "ApproximateCounter", Failing)  # the size is counted with it
    row = session_row(_ctxlab_file(tmp_path / "s.jsonl", {"source": "codex"}))
    assert row["problem"] == (
        "loaded, but its figures could not be read: ValueError: an odd figure"
    )
    assert row["modified"] == MODIFIED and row["name"] == "s"


def test_each_subagent_held_in_a_sessions_file_is_read_as_its_episode(tmp_path: Path) -> None:
    from tests.io.test_claude_subagents import _parallel

    rows = session_rows([_parallel(tmp_path)])[0]
    assert [(r["name"], r["episode"], r["requests"]) for r in rows] == [
        ("parallel", 0, 1),
        ("parallel#1", 1, 2),
        ("parallel#2", 2, 2),
    ]


def test_the_progress_bar_counts_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(3):
        _ctxlab_file(tmp_path / f"s{n}.jsonl", {})
    sessions(tmp_path, workers=1)  # a bar by default
    bar = capsys.readouterr().err
    assert "3/3" in bar and re.search(r"[\d?]file/s", bar), bar
    sessions(tmp_path, workers=1, progress=False)
    assert capsys.readouterr().err == ""


def test_a_subagents_row_that_fails_keeps_its_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctxlab.io._folder as folder
    from tests.io.test_claude_subagents import _parallel

    path = _parallel(tmp_path)
    real = folder.read

    def failing_subagents(at: Path, episode: int = 0) -> Any:
        if episode:
            raise OSError(5, "Input/output error")
        return real(at, episode=episode)

    def read_then_gone(at: Path, episode: int = 0) -> Any:
        transcript = real(at, episode=episode)
        at.unlink()  # the file went away while its subagents were listed
        return transcript

    for reader, problem in (
        (failing_subagents, "OSError: [Errno 5] Input/output error"),
        (read_then_gone, "cannot read it: No such file or directory"),
    ):
        monkeypatch.setattr(folder, "read", reader)
        rows = session_rows([path])[0]
        assert [(r["episode"], r["problem"]) for r in rows] == [
            (0, None),
            (1, problem),
            (2, problem),
        ]


def test_markdown_cut_inside_a_character_is_still_told_apart(tmp_path: Path) -> None:
    # The first 2,048 bytes are read: a character they cut in two is replaced, not an error.
    head = "<!-- Generated by SpecStory -->\n\n# Notes\n\n"
    pad = "x" * (2_047 - len(head.encode()))
    (tmp_path / "chat.md").write_text(head + pad + "é" + "\n\n_**User**_\n\nhi\n")
    assert (tmp_path / "chat.md").read_bytes()[2_047:2_049] == "é".encode()
    assert _listed(tmp_path) == ["chat.md"]
