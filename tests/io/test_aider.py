"""aider's .aider.chat.history.md: runs, the user's inputs, the replies, aider's own output
counted, the token reports as usage (tests/fixtures/aider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import load
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up

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
    census = added_up(transcript)
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


REFLECTIONS = HISTORY.parent / "reflections" / ".aider.chat.history.md"


def test_each_billed_request_is_a_reply_of_its_own_with_what_aider_sent_before_it() -> None:
    # Five token reports, five requests: after the first reply aider adds app.py to the chat
    # (config.py refused), then reflects an edit error, then the linter's output — three
    # requests with no input of the user's. Each reply keeps its own bill.
    transcript = load(REFLECTIONS)
    messages = transcript.messages
    assert [m.role for m in messages] == ["user", "assistant"] * 5
    texts = [m.content[0].text for m in messages]  # type: ignore[union-attr]
    assert texts[2] == (
        "I added these files to the chat: app.py\nLet me know if there are others we should add."
    )
    assert texts[4].startswith("# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplace")
    assert texts[4].endswith("indentation, docstrings, etc")
    assert ">>>>>>> REPLACE\n\nDid you mean" in texts[4]  # its unquoted lines, whole
    assert texts[6].startswith("# Fix any errors below, if possible.\n\n## Running: ")
    assert texts[6].endswith('█  1│GREETING = os.environ.get("GREETING", "hello")')
    assert texts[8] == "Thanks!"
    assert texts[5].startswith('app.py\n```python\n<<<<<<< SEARCH\nGREETING = "hello"')
    assert texts[7].endswith(
        'import os\n\nGREETING = os.environ.get("GREETING", "hello")\n>>>>>>> REPLACE\n```'
    )
    # "3.1k sent, 1.2k cache write, 1.8k cache hit": 100 sent uncached; the cost on the next
    # line is aider's, not a reply.
    assert transcript.usage == {
        1: ProviderUsage(2_100, 31, 0, 0),
        3: ProviderUsage(2_600, 52, 0, 0),
        5: ProviderUsage(100, 48, 1_800, 1_200),
        7: ProviderUsage(400, 45, 3_000, 0),
        9: ProviderUsage(300, 4, 3_300, 0),
    }
    meta = transcript.meta
    assert meta["models"] == ["openrouter/openai/gpt-4o-mini"]
    assert meta["aider_prompts"] == {"added files": 1, "edit error": 1, "lint errors": 1}
    assert "unrecorded_prompts" not in meta  # each rebuilt from what the history holds
    census = added_up(transcript)
    assert (census.usage_read, census.usage_placed, census.usage_lost) == (5, 5, {})
    assert census.replies == 5
    lines = REFLECTIONS.read_text().splitlines()
    assert sum(census.read.values()) == len(lines)
