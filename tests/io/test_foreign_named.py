"""Formats ctxlab recognises but does not read (``ctxlab/io/_foreign.py``): none today — aider's
LLM log, once named here, is read by its own importer (``tests/io/test_aider_llm.py``); a log
of it holding no request to read says so, typed, and nothing else is taken for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io._foreign import foreign_document, foreign_text
from ctxlab.io.formats.aider.llm_history import is_aider_llm_history
from tests.hostile import says


@pytest.mark.parametrize(
    ("head", "said"),
    [
        ("TO LLM 2025-01-01T10:00:00\n-------\nSYSTEM hi\n", "no messages"),
        ("LLM RESPONSE 2025-01-01T10:00:01\nASSISTANT hi\n", "no request in this aider LLM log"),
    ],
)
def test_an_aider_llm_log_with_nothing_to_read_says_so(
    tmp_path: Path, head: str, said: str
) -> None:
    assert foreign_text(head) is None and is_aider_llm_history(head)
    path = tmp_path / ".aider.llm.history"
    path.write_text(head)
    with pytest.raises(MessageFormatError) as raised:
        load(path)
    says(str(raised.value), str(path), said)


@pytest.mark.parametrize(
    "head", ["", "TO LLMS", "to llm 2025", "# aider chat started at", "LLM", "\n  TO LLM 2025"]
)
def test_other_texts_are_not_taken_for_it(head: str) -> None:
    assert foreign_text(head) is None
    assert not is_aider_llm_history(head + "\n")


def test_no_document_is_foreign_now() -> None:
    # Gemini CLI's stream-json and Letta's agent files, once named here, have importers.
    for value in ({"type": "init", "session_id": "s"}, {"agents": []}, [], None):
        assert foreign_document(value) is None
