"""OpenCode's storage folder (``~/.local/share/opencode/storage``: ``session/<project>/<id>.json``,
``message/<session>/<id>.json``, ``part/<message>/<id>.json``) is known by what it holds, not by
its name: a copy under any name lists one row per session, never one failing row per message or
part file, and a message, part or project file loaded alone says which session file to load
(the fixture ``tests/fixtures/opencode/storage``, from OpenCode's own types: no licensed real
storage folder was found)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import ctxlab
from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from tests.hostile import says

STORAGE = Path(__file__).parents[1] / "fixtures" / "opencode" / "storage"
(SESSION,) = (STORAGE / "session").glob("*/*.json")


@pytest.mark.parametrize("name", ["storage", "opencode-storage", "copy"])
def test_a_storage_folder_under_any_name_lists_its_sessions(tmp_path: Path, name: str) -> None:
    root = tmp_path / "data" / name
    shutil.copytree(STORAGE, root)
    # A second session of another project, with no message yet (OpenCode writes its folder
    # with the first message).
    empty = root / "session" / "global" / "ses_0000000000001abcdefghijkl.json"
    empty.parent.mkdir()
    empty.write_text(json.dumps({**json.loads(SESSION.read_text()), "id": empty.stem}))
    for folder in (tmp_path, root):
        frame = ctxlab.sessions(folder, progress=False, workers=1)
        assert sorted(frame["path"]) == sorted(
            [str(root / SESSION.relative_to(STORAGE)), str(empty)]
        )
        rows = {row.path: row for row in frame.itertuples()}
        stored = rows[str(root / SESSION.relative_to(STORAGE))]
        assert pd.isna(stored.problem) and stored.format == "opencode"
        assert stored.messages == len(load(SESSION).messages) == 13
        # Read as the OpenCode session it is, which holds no message yet.
        assert rows[str(empty)].problem.endswith(
            "no messages (read 1 record: 1 used → 0 messages, 0 tool calls, usage on 0 of 0 replies)"
        )


def test_a_message_or_part_file_says_which_session_to_load(tmp_path: Path) -> None:
    root = tmp_path / "opencode-copy"
    shutil.copytree(STORAGE, root)
    session = root / SESSION.relative_to(STORAGE)
    message = next(iter(sorted((root / "message").rglob("*.json"))))
    part = next(iter(sorted((root / "part").rglob("*.json"))))
    for path in (message, part):
        with pytest.raises(MessageFormatError) as caught:
            load(path)
        says(str(caught.value), str(path), "not a session", str(session), "ctxlab.sessions(")
    (project,) = (root / "project").glob("*.json")
    with pytest.raises(MessageFormatError) as caught:
        load(project)
    says(str(caught.value), "not a session", "session/<project>/<session id>.json")


def test_a_folder_that_only_looks_alike_is_read_file_by_file(tmp_path: Path) -> None:
    # Folders named session/ and message/ holding files not named by OpenCode's ids are not its
    # storage: each file is read (and said) on its own.
    (tmp_path / "session").mkdir()
    (tmp_path / "message").mkdir()
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    (tmp_path / "message" / "chat.json").write_text(json.dumps(chat))
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["path"].tolist() == [str(tmp_path / "message" / "chat.json")]
    assert frame["problem"].isna().all() and frame["messages"].tolist() == [2]


def test_a_session_file_named_apart_from_its_id_finds_its_messages_by_the_id(
    tmp_path: Path,
) -> None:
    # A storage whose session ids lack OpenCode's "ses_" prefix while the file has it (seen in
    # a public copy of a storage folder): the messages sit under the id the session states.
    root = tmp_path / "storage"
    shutil.copytree(STORAGE, root)
    copy = root / SESSION.relative_to(STORAGE)
    session = json.loads(copy.read_text())
    (root / "message" / session["id"]).rename(root / "message" / "s_renamed")
    copy.write_text(json.dumps({**session, "id": "s_renamed"}))
    expected = load(SESSION)
    found = load(copy)
    assert [m.model_dump() for m in found.messages] == [m.model_dump() for m in expected.messages]
    assert found.usage == expected.usage
