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
    # aider's own lines (the command line, applied edits, commits) are counted; its token
    # reports are the usage; every line of the file is read, the other run's among them.
    lines = HISTORY.read_text().splitlines()
    first_run = HISTORY.read_text().split("# aider chat started at")[1]
    quoted = [line for line in first_run.splitlines() if line.startswith("> ")]
    tokens = [line for line in quoted if line.startswith("> Tokens:")]
    census = transcript.census
    assert census is not None and census.adds_up
    assert sum(census.read.values()) == len(lines)
    assert census.read["aider output line"] == len(quoted) == 8
    assert census.skipped["aider output line"] == len(quoted) - len(tokens) == 6
    assert (census.usage_read, census.usage_placed) == (len(tokens), 2)


def test_each_run_is_an_episode() -> None:
    second = load(HISTORY, episode=1)
    assert [m.content[0].text for m in second.messages] == [  # type: ignore[union-attr]
        "What does cli.py do?",
        "It parses a path and an optional --verbose flag.",
    ]
    with pytest.raises(MessageFormatError, match=r"no run 2: the history holds 2 runs"):
        load(HISTORY, episode=2)


def test_the_first_run_with_a_message_is_the_default_and_an_empty_run_says_which_hold_one(
    tmp_path: Path,
) -> None:
    startup = "# aider chat started at 2026-01-19 08:00:00\n\n> aider --model sonnet  \n\n"
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(startup * 3 + HISTORY.read_text().lstrip())
    transcript = load(path)
    assert transcript.meta["episode"] == 3 and transcript.meta["runs"] == 5
    assert transcript.messages == load(HISTORY).messages
    with pytest.raises(
        MessageFormatError, match=r"run 1 of the history's 5 holds no message.*3, 4"
    ):
        load(path, episode=1)
    path.write_text(startup * 2)
    with pytest.raises(MessageFormatError, match=r"none of the history's 2 runs holds a message"):
        load(path)
