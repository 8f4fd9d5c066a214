"""Tool output the agent cannot decode is replaced, noted, and the run goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, SessionLog
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel, tool_call


async def test_undecodable_tool_output_is_replaced_noted_and_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    try:
        (folder / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses non-UTF-8 names")

    def list_files() -> str:
        """List the folder."""
        return "\n".join(os.listdir(folder))  # a surrogate escape: 'caf\udce9.txt'

    def raw_bytes() -> bytes:
        """A subprocess's raw output."""
        return b"ok \xff\xfe done"

    log = SessionLog(tmp_path / "log.sqlite")
    replies = [tool_call("list_files"), tool_call("raw_bytes"), "seen", "again"]
    agent = Agent(
        model=ScriptedModel(replies),
        tools=[list_files, raw_bytes],
        counter=ApproximateCounter(),
        session_log=log,
    )
    await agent("list them")
    results = [
        r.text for m in agent.history if m.role == "user" for r in getattr(m, "tool_results", ())
    ]
    assert results[0].startswith("[ctxlab: 1 undecodable bytes") and "caf\ufffd.txt" in results[0]
    assert (
        results[1].startswith("[ctxlab: 2 undecodable bytes")
        and "ok \ufffd\ufffd done" in results[1]
    )
    kinds = [t.kind for m in agent.manifests for t in m.transforms]
    assert kinds.count("tool_output_decoded") == 2
    json.dumps(agent.history[-1].model_dump(mode="json"))  # serializes
    assert (await agent("and now?")).content[0].text == "again"  # type: ignore[union-attr]
