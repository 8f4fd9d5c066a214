"""`MemorylessModel`: its answer is a function of the request alone, and what a config keeps or
cuts of the tool results decides its steps — shown by editing one request by hand and watching
the action change, and by whole sessions under configs that cut more and more."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxlab.agent import Agent
from ctxlab.demo import DEMO_PROMPT, demo_agent, demo_config
from ctxlab.exceptions import MaxStepsExceeded
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import MemorylessModel
from ctxlab.models._memoryless import decide
from tests.fork.helpers import project_tests_pass
from tests.helpers import requests_sent


async def _run(
    tmp_path: Path, max_steps: int = 20, **config: object
) -> tuple[Agent, list[ModelRequest], str]:
    agent = demo_agent(
        tmp_path, model=MemorylessModel(), context_config=demo_config(**config), max_steps=max_steps
    )
    sent = requests_sent(agent)
    try:
        reply = (await agent(DEMO_PROMPT)).content[0].text  # type: ignore[union-attr]
    except MaxStepsExceeded as exc:
        reply = str(exc)
    return agent, sent, reply


def _actions(agent: Agent) -> list[tuple[str, object]]:
    return [
        (u.name, u.input.get("limit") or u.input.get("pattern"))
        for m in agent.history
        if isinstance(m, AssistantMessage)
        for u in m.tool_uses
    ]


async def test_the_same_request_gets_the_same_answer_ids_included(tmp_path: Path) -> None:
    _, sent, _ = await _run(tmp_path)
    for request in sent:
        one = await MemorylessModel().request(request)
        two = await MemorylessModel().request(request)
        assert one.message == two.message
        assert decide(request) == list(one.message.content)


RUN, GREP, READ = ("run_tests", None), ("grep", "apply_discount"), ("read_file", None)
EDIT, DEF = ("edit_file", None), ("grep", "def apply_discount")


@pytest.mark.parametrize(
    ("limit", "actions", "fixed"),
    [
        # Nothing cut: the whole run.
        (1500, [RUN, GREP, READ, EDIT, RUN], True),
        # The read of totals.py is cut: a narrower window, one step more.
        (300, [RUN, GREP, READ, ("read_file", 8), EDIT, RUN], True),
        # The search is cut before the definition too: a second search, two steps more.
        (200, [RUN, GREP, DEF, READ, ("read_file", 8), EDIT, RUN], True),
        # Even the narrowest read is cut: it gives up, the bug stays.
        (90, [RUN, GREP, DEF, READ, ("read_file", 8), ("read_file", 5)], False),
        # The verdict of every test run is cut: it gives up after three.
        (60, [RUN, RUN, RUN], False),
    ],
)
async def test_cutting_tool_results_costs_steps_then_the_task(
    tmp_path: Path, limit: int, actions: list[tuple[str, object]], fixed: bool
) -> None:
    agent, _, reply = await _run(tmp_path, tool_result_limit=limit)
    assert _actions(agent) == actions
    assert project_tests_pass(tmp_path) is fixed
    assert reply.startswith("The tests pass") is fixed


async def test_a_config_that_drops_the_verdict_at_every_step_never_edits(tmp_path: Path) -> None:
    # Compaction at half the window: each compaction drops the last test run from sight.
    agent, _, reply = await _run(tmp_path, max_steps=12, trigger_ratio=0.5)
    assert "12 reasoning requests" in reply
    assert "edit_file" not in [n for n, _ in _actions(agent)]
    assert not project_tests_pass(tmp_path)


async def test_the_answer_follows_what_the_request_holds(tmp_path: Path) -> None:
    # The request where it edits holds the read of totals.py in full. Taken out by hand, it
    # reads again; cut by hand before the faulty line, it reads a narrower window.
    _, sent, _ = await _run(tmp_path)
    editing = next(
        r for r in sent if [b.name for b in decide(r) if hasattr(b, "name")] == ["edit_file"]
    )
    read = _read_result(editing)
    without = _replace_result(editing, read.tool_use_id, None)  # as a mask leaves it
    (again,) = [b for b in decide(without) if hasattr(b, "name")]
    assert (again.name, again.input) == ("read_file", {"path": "ledger/totals.py"})  # type: ignore[union-attr]
    fixed = _replace_result(editing, read.tool_use_id, read.text.replace("/ 10)", "/ 100)"))
    (stop,) = decide(fixed)
    assert "no faulty division" in stop.text  # type: ignore[union-attr]
    head = read.text.split("discount = ")[0] + "\n<<<TRUNCATED>>>"
    cut = _replace_result(editing, read.tool_use_id, head)
    (narrow,) = [b for b in decide(cut) if hasattr(b, "name")]
    assert (narrow.name, narrow.input["limit"]) == ("read_file", 8)  # type: ignore[union-attr]


def test_without_the_workspace_tools_it_says_what_it_needs() -> None:
    request = ModelRequest(system="", messages=(UserMessage(content="fix it"),))
    (answer,) = decide(request)
    assert "workspace tools" in answer.text  # type: ignore[union-attr]


def _read_result(request: ModelRequest) -> ToolResultBlock:
    uses = {
        u.id: u for m in request.messages if isinstance(m, AssistantMessage) for u in m.tool_uses
    }
    return next(
        r
        for m in request.messages
        if isinstance(m, UserMessage)
        for r in m.tool_results
        if uses[r.tool_use_id].name == "read_file"
    )


def _replace_result(request: ModelRequest, tool_use_id: str, text: str | None) -> ModelRequest:
    messages: list[UserMessage | AssistantMessage] = []
    for message in request.messages:
        if isinstance(message, UserMessage) and any(
            r.tool_use_id == tool_use_id for r in message.tool_results
        ):
            blocks = [
                b.model_copy(update={"content": text or "(removed)"})
                if isinstance(b, ToolResultBlock) and b.tool_use_id == tool_use_id
                else b
                for b in message.content
            ]
            message = UserMessage(content=tuple(blocks))
        messages.append(message)
    return dataclasses.replace(request, messages=tuple(messages))
