"""What `load` says when it is called wrong or given a damaged file: the problem and what to
do, in a typed error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab import Agent, load
from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.io import FORMATS
from ctxlab.models import ScriptedModel

HISTORY = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_truncated_pretty_printed_file_is_said_to_be_truncated(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(HISTORY, indent=2)[:-25])
    with pytest.raises(
        MessageFormatError, match=r"ends before its JSON document does \(line \d+.*truncated"
    ):
        load(path)


def test_an_unknown_format_lists_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(HISTORY))
    with pytest.raises(UsageError, match="format must be one of ctxlab, claude_code") as caught:
        load(path, format="bogus")  # type: ignore[arg-type]
    assert all(name in str(caught.value) for name in FORMATS)


@pytest.mark.parametrize("episode", ["x", -1, 1.5, True])
def test_an_episode_must_be_a_whole_number(episode: object) -> None:
    with pytest.raises(UsageError, match="episode must be a whole number"):
        load(HISTORY, episode=episode)  # type: ignore[arg-type]


def test_an_instruction_name_is_called_an_instruction_name() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(UsageError, match="invalid instruction name '<b>x</b>'"):
        agent.instruction("<b>x</b>", "be brief")
