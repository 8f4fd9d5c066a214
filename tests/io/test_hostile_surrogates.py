"""A lone surrogate a session file escapes in JSON (``"\\ud800"``: no UTF-8 can hold it, yet
Python's json reads it) survives `Transcript.save` in each of its formats and loads back the
same. A message's text has it replaced by U+FFFD as every block's is (``messages/_text.py``);
the transcript's meta (a Continue title, a Goose description) and System text keep it, and
saving wrote it raw and raised ``UnicodeEncodeError``, an error of Python's own. Continue and
Goose files, a transcript built in code, and hypothesis over any text — which found that U+0085
or U+2028 in a saved ctxlab file cut its line in two for the reader (``str.splitlines``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from ctxlab import AssistantMessage, Transcript, UserMessage, load
from tests.strategies import SETTINGS, any_text


def _continue(tmp_path: Path, text: str) -> Path:
    history = [
        {"message": {"role": "system", "content": f"system {text}"}, "contextItems": []},
        {"message": {"role": "user", "content": text}, "contextItems": []},
        {"message": {"role": "assistant", "content": f"read {text}"}, "contextItems": []},
    ]
    session = {"sessionId": "s", "title": f"title {text}", "history": history}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session))  # ASCII: the surrogate as its JSON escape
    return path


def _goose(tmp_path: Path, text: str) -> Path:
    meta = {"working_dir": f"/w/{text}", "description": f"about {text}", "message_count": 2}
    messages = [
        {"role": role, "created": 1, "content": [{"type": "text", "text": f"{role} {text}"}]}
        for role in ("user", "assistant")
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (meta, *messages)))
    return path


LONE = ["\ud800", "\udfff", "a\udc80b", "\ud83d x \ude00"]


@pytest.mark.parametrize("write", [_continue, _goose], ids=["continue", "goose"])
@pytest.mark.parametrize("lone", LONE)
def test_a_lone_surrogate_is_saved_and_loads_back_the_same(
    tmp_path: Path, write: Any, lone: str
) -> None:
    loaded = load(write(tmp_path, lone))
    held = {k: v for k, v in loaded.meta.items() if isinstance(v, str) and lone in v}
    assert len(held) == (1 if write is _continue else 2)  # the title; the folder, the description
    saved = loaded.save(tmp_path / "saved.jsonl")
    saved.read_bytes().decode("utf-8")  # UTF-8, every byte
    again = load(saved)
    assert {k: again.meta[k] for k in held} == held
    assert again.system == loaded.system and again.messages == loaded.messages
    if write is _continue:
        assert again.system == f"system {lone}"


@pytest.mark.parametrize("format", ["ctxlab", "anthropic", "openai"])
@pytest.mark.parametrize("kept", ["\x85", "\u2028", "x\u2029y"])
def test_a_line_break_json_leaves_raw_does_not_cut_a_saved_record(
    tmp_path: Path, format: str, kept: str
) -> None:
    # U+0085, U+2028, U+2029: breaks to ``str.splitlines``, which cut the saved JSON Lines.
    built = Transcript(
        "t",
        {"note": kept},
        f"sys {kept}",
        (UserMessage(content=f"hi {kept}"), AssistantMessage(content="yo")),
    )
    again = load(built.save(tmp_path / "saved.json", format=format))
    assert again.system == built.system and again.messages == built.messages


@pytest.mark.parametrize("format", ["ctxlab", "anthropic", "openai"])
@pytest.mark.parametrize("lone", LONE)
def test_every_save_format_keeps_the_system_text_whole(
    tmp_path: Path, format: str, lone: str
) -> None:
    built = Transcript(
        "t",
        {"note": f"n {lone}"},
        f"be brief {lone}",
        (UserMessage(content="hi"), AssistantMessage(content="yo")),
    )
    saved = built.save(tmp_path / "saved.json", format=format)
    saved.read_bytes().decode("utf-8")
    again = load(saved)
    assert again.system == f"be brief {lone}" and again.messages == built.messages
    if format == "ctxlab":
        assert again.meta["note"] == f"n {lone}"


@SETTINGS
@given(text=any_text.filter(str.strip))
def test_any_text_a_file_holds_is_saved_and_read_back(tmp_path_factory: Any, text: str) -> None:
    folder = tmp_path_factory.mktemp("surrogates")
    loaded = load(_continue(folder, text))
    again = load(loaded.save(folder / "saved.jsonl"))
    assert again.meta["title"] == loaded.meta["title"] == f"title {text}"
    assert again.system == loaded.system and again.messages == loaded.messages
