"""Any tool output and any call id leave a working agent (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import (
    ApproximateCounter,
    ContextConfig,
)
from ctxlab.agent import Agent
from ctxlab.exceptions import CtxlabError
from ctxlab.messages import find_tool_pair_problems
from ctxlab.models import ScriptedModel, tool_call
from tests.strategies import SETTINGS, any_text, json_value


@st.composite
def tool_outputs(draw: st.DrawFn) -> Any:
    return draw(st.binary(max_size=300) | any_text | json_value)


@SETTINGS
@given(
    outputs=st.lists(tool_outputs(), min_size=1, max_size=4),
    ids=st.lists(any_text.filter(bool), min_size=1, max_size=4),
)
async def test_any_tool_output_and_any_call_id_leave_a_working_agent(
    tmp_path_factory: Any, outputs: list[Any], ids: list[str]
) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    produced = iter(outputs)

    def tool() -> Any:
        """Returns whatever the test hands it."""
        return next(produced, "")

    calls = [tool_call("tool", id=i) for i in ids][: len(outputs)]
    model = ScriptedModel([*calls, "done", "after"], context_window=4_000)
    config = ContextConfig(tool_result_limit=200)
    agent = Agent(
        model=model,
        tools=[tool],
        counter=ApproximateCounter(),
        workspace=workspace,
        context_config=config,
    )
    try:
        await agent("go")
    except CtxlabError as exc:
        assert str(exc).strip()  # e.g. a repeated id: refused, nothing kept
    for request in model.requests:
        assert not find_tool_pair_problems(request.messages)
        json.dumps(request.to_anthropic())
    assert all(
        m.input_limit >= m.estimated_input_tokens
        for m in agent.manifests
        if m.validation == "passed"
    )
    written = {p: p.read_bytes() for p in Path(workspace).rglob("*") if p.is_file()}
    model.replies = ["after"]  # a valid reply now: whatever happened before, the agent works
    reply = await agent("and now?")
    assert reply.content
    for path, data in written.items():
        assert path.read_bytes() == data  # nothing overwritten
