"""Formats ctxlab recognises but does not read (``ctxlab/io/_foreign.py``): aider's LLM history
named, with what to load instead, from either of its opening lines — and nothing else taken for
it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io._foreign import foreign_document, foreign_text

SAID = (
    "this is aider's LLM history (.aider.llm.history); ctxlab reads aider's chat history: load "
    ".aider.chat.history.md from the same folder"
)


@pytest.mark.parametrize(
    "head",
    ["TO LLM 2025-01-01T10:00:00\n", "LLM RESPONSE 2025-01-01T10:00:01\n", "\n  TO LLM 2025"],
)
def test_aiders_llm_history_is_named_with_what_to_load(tmp_path: Path, head: str) -> None:
    assert foreign_text(head) == SAID
    path = tmp_path / ".aider.llm.history"
    path.write_text(head + "-------\nSYSTEM hi\n")
    with pytest.raises(MessageFormatError) as raised:
        load(path)
    assert str(raised.value) == f"{path}: {SAID}"


@pytest.mark.parametrize("head", ["", "TO LLMS", "to llm 2025", "# aider chat started at", "LLM"])
def test_other_texts_are_not_taken_for_it(head: str) -> None:
    assert foreign_text(head) is None


def test_no_document_is_foreign_now() -> None:
    # Gemini CLI's stream-json and Letta's agent files, once named here, have importers.
    for value in ({"type": "init", "session_id": "s"}, {"agents": []}, [], None):
        assert foreign_document(value) is None
