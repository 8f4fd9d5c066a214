"""A session log damaged past its header gives a typed error and is left untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import SessionLog
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel


async def test_a_log_damaged_past_its_header_gives_a_typed_error_and_stays_untouched(
    tmp_path: Path,
) -> None:
    from ctxlab.exceptions import SessionLogError

    path = tmp_path / "log.sqlite"
    log = SessionLog(path)
    agent = Agent(model=ScriptedModel(["one", "two"]), session_log=log, session_id="s")
    await agent("first " * 2000)
    await agent("second " * 2000)
    log.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    data[2 * 4096 :] = b"\x13" * (len(data) - 2 * 4096)  # the header page survives
    path.write_bytes(bytes(data))
    with pytest.raises(SessionLogError) as caught:
        damaged = SessionLog(path)
        Agent(model=ScriptedModel([]), session_log=damaged, session_id="s")
    assert str(path) in str(caught.value) and "another file" in str(caught.value)
    assert path.read_bytes() == bytes(data)
