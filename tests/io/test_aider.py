"""aider's .aider.chat.history.md: runs, the user's inputs, the replies, aider's own output
counted, the token reports as usage (tests/fixtures/aider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import load
from ctxlab.messages import ProviderUsage

HISTORY = Path(__file__).parents[1] / "fixtures" / "aider" / ".aider.chat.history.md"


def test_a_run_loads_with_its_inputs_replies_and_token_reports() -> None:
    transcript = load(HISTORY)
    assert transcript.meta["source"] == "aider"
    assert (transcript.meta["runs"], transcript.meta["started"]) == (2, "2026-01-20 14:02:11")
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    # A two-line input is one message.
    assert transcript.messages[0].content[0].text == (  # type: ignore[union-attr]
        "Add a --verbose flag to cli.py\nand log each file it reads."
    )
    reply = transcript.messages[1].content[0].text  # type: ignore[union-attr]
    assert reply.startswith("I'll add the flag") and ">>>>>>> REPLACE" in reply
    # "2.4k sent, 1.1k cache hit": the cache hit is among the tokens sent.
    assert transcript.usage == {
        1: ProviderUsage(1_300, 180, 1_100, 0),
        3: ProviderUsage(2_650, 12, 0, 0),
    }
    # aider's own lines (the command line, applied edits, commits, token reports) are counted.
    first_run = HISTORY.read_text().split("# aider chat started at")[1]
    quoted = sum(1 for line in first_run.splitlines() if line.startswith("> "))
    assert transcript.meta["skipped"] == {"aider output line": quoted} and quoted == 8


def test_each_run_is_an_episode() -> None:
    second = load(HISTORY, episode=1)
    assert [m.content[0].text for m in second.messages] == [  # type: ignore[union-attr]
        "What does cli.py do?",
        "It parses a path and an optional --verbose flag.",
    ]
    with pytest.raises(MessageFormatError, match="no run 2"):
        load(HISTORY, episode=2)
