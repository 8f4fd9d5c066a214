"""The agent loop with scripted models: tools, parallel calls, errors, permissions, events."""

from __future__ import annotations

import asyncio

import pytest

from ctxlab import ApproximateCounter, ContextConfig, HintBlock
from ctxlab.agent import Agent, Tool, tool
from ctxlab.exceptions import (
    AgentBusy,
    CallStopped,
    MaxStepsExceeded,
    ToolDefinitionError,
    UsageError,
)
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, UserMessage
from ctxlab.models import FunctionModel, ScriptedModel, tool_call


def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def shout(text: str) -> str:
    """Upper-case a text."""
    await asyncio.sleep(0)
    return text.upper()


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def results_of(model: ScriptedModel, index: int) -> dict[str, ToolResultBlock]:
    """The tool results the model saw in its request number ``index``."""
    found: dict[str, ToolResultBlock] = {}
    for message in model.requests[index].messages:
        if isinstance(message, UserMessage):
            for result in message.tool_results:
                found[result.tool_use_id] = result
    return found


def make(model: ScriptedModel | FunctionModel, **kwargs: object) -> Agent:
    return Agent(
        name="t",
        system_prompt="Be brief.",
        model=model,
        tools=[add, shout, explode],
        counter=ApproximateCounter(),
        **kwargs,  # type: ignore[arg-type]
    )


def test_tool_schema_comes_from_signature_and_docstring() -> None:
    made = Tool.from_function(add)
    assert made.description == "Add two integers."
    assert made.input_schema["properties"]["a"] == {
        "type": "integer",
        "description": "The first number.",
    }
    assert made.input_schema["properties"]["b"]["default"] == 1
    assert made.input_schema["required"] == ["a"]


def test_tool_definition_errors_name_the_problem() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(ToolDefinitionError, match="parameter 'x' has no type annotation"):
        Tool.from_function(untyped)
    with pytest.raises(ToolDefinitionError, match="invalid"):
        Tool.from_function(add, name="has space")

    @tool(name="plus")
    def other(a: int) -> int:
        return a

    assert other.name == "plus"


async def test_multi_step_loop_runs_tools_and_returns_the_reply() -> None:
    model = ScriptedModel(
        [
            tool_call("add", {"a": 2, "b": 3}),
            [TextBlock(text="now shout"), tool_call("shout", {"text": "five"})],
            "The answer is FIVE.",
        ]
    )
    agent = make(model)
    reply = await agent("What is 2 + 3, loudly?")
    assert isinstance(reply, AssistantMessage)
    assert reply.content[0].text == "The answer is FIVE."  # type: ignore[union-attr]
    assert [r.text for r in results_of(model, 1).values()] == ["5"]
    assert "FIVE" in [r.text for r in results_of(model, 2).values()]
    # Three reasoning requests, three manifests, all passed; System first in every request.
    assert [m.validation for m in agent.manifests] == ["passed"] * 3
    assert all(r.system == "Be brief." for r in model.requests)
    assert len(agent.history) == 6  # user, (assistant, results) x2, reply


async def test_parallel_calls_run_concurrently_and_keep_their_order() -> None:
    started: list[str] = []
    gate = asyncio.Event()

    async def slow(name: str) -> str:
        """Wait for the gate."""
        started.append(name)
        if len(started) == 2:
            gate.set()
        await asyncio.wait_for(gate.wait(), 2)  # deadlocks unless both run at once
        return f"done {name}"

    model = ScriptedModel(
        [[tool_call("slow", {"name": "one"}), tool_call("slow", {"name": "two"})], "ok"]
    )
    agent = Agent(model=model, tools=[slow], counter=ApproximateCounter())
    await agent("go")
    results = list(results_of(model, 1).values())
    assert [r.text for r in results] == ["done one", "done two"]
    uses = model.requests[1].messages[-2].tool_uses  # type: ignore[union-attr]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]


async def test_tool_errors_and_bad_arguments_go_back_to_the_model() -> None:
    model = ScriptedModel(
        [
            [
                tool_call("explode", {"reason": "disk full"}),
                tool_call("add", {"a": "not a number"}),
                tool_call("missing_tool", {}),
            ],
            "I saw the errors.",
        ]
    )
    agent = make(model)
    await agent("try")
    results = list(results_of(model, 1).values())
    assert all(r.is_error for r in results)
    assert "explode failed: RuntimeError: disk full" in results[0].text
    assert "Invalid arguments for add: a:" in results[1].text
    assert "no tool named 'missing_tool'" in results[2].text


async def test_permission_hook_denies_and_asks() -> None:
    asked: list[str] = []

    def hook(use):  # type: ignore[no-untyped-def]
        return {"add": "allow", "shout": ("deny", "no shouting here"), "explode": "ask"}[use.name]

    def approver(use):  # type: ignore[no-untyped-def]
        asked.append(use.name)
        return False

    model = ScriptedModel(
        [
            [
                tool_call("add", {"a": 1}),
                tool_call("shout", {"text": "x"}),
                tool_call("explode", {"reason": "r"}),
            ],
            "ok",
        ]
    )
    agent = make(model, permission=hook, approver=approver)
    events = [e async for e in agent.stream_events("go")]
    decisions = [e.decision for e in events if e.type == "tool_call"]
    assert decisions == ["allow", "deny", "deny"]
    assert asked == ["explode"]
    results = list(results_of(model, 1).values())
    assert results[0].text == "2"
    assert results[1].is_error and "no shouting here" in results[1].text
    assert results[2].is_error and "the user declined" in results[2].text


async def test_stream_events_are_typed_and_ordered() -> None:
    model = ScriptedModel([tool_call("add", {"a": 1}), "two"])
    agent = make(model)
    types = [e.type async for e in agent.stream_events("count")]
    assert types == [
        "context_build",
        "model_response",
        "tool_call",
        "tool_result",
        "context_build",
        "text_delta",
        "model_response",
        "reply",
    ]


async def test_events_reach_subscribers_until_they_unsubscribe() -> None:
    model = ScriptedModel(["one", "two"])
    agent = make(model)
    seen: list[str] = []
    unsubscribe = agent.subscribe(lambda e: seen.append(e.type))
    await agent("a")
    assert "reply" in seen
    unsubscribe()
    seen.clear()
    await agent("b")
    assert seen == []


async def test_usage_is_attached_to_the_manifest() -> None:
    agent = make(ScriptedModel(["hi"]))
    await agent("hello")
    usage = agent.manifests[-1].provider_usage
    assert usage is not None and usage.input_tokens > 0


async def test_bad_input_and_misuse_raise_clear_errors() -> None:
    agent = make(ScriptedModel(["x"] * 3))
    with pytest.raises(UsageError, match="empty"):
        await agent("   ")
    with pytest.raises(UsageError, match="takes a str"):
        await agent(42)
    with pytest.raises(UsageError, match="must be a ctxlab Model"):
        Agent(model="claude")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="already registered"):
        agent.add_tool(add)
    with pytest.raises(UsageError, match="ran out of replies"):
        await make(ScriptedModel([]))("hi")


async def test_max_steps_and_busy() -> None:
    loop_model = ScriptedModel([tool_call("add", {"a": 1}) for _ in range(5)])
    agent = make(loop_model, max_steps=3)
    with pytest.raises(MaxStepsExceeded, match="3 reasoning requests"):
        await agent("loop")

    gate = asyncio.Event()

    async def wait_for_gate(request, info):  # type: ignore[no-untyped-def]
        await gate.wait()
        return "done"

    busy = make(FunctionModel(wait_for_gate))
    first = asyncio.ensure_future(busy("one"))
    await asyncio.sleep(0.01)
    with pytest.raises(AgentBusy):
        await busy("two")
    gate.set()
    await first


async def test_stop_ends_the_call_at_the_next_boundary_and_keeps_pairs_valid() -> None:
    agent: Agent

    def stopper(text: str) -> str:
        """Stops the agent from inside a tool."""
        agent.stop()
        return text

    model = ScriptedModel([tool_call("stopper", {"text": "x"}), "after", "again"])
    agent = Agent(model=model, tools=[stopper], counter=ApproximateCounter())
    with pytest.raises(CallStopped):
        await agent("go")
    assert agent.context.conversation[-1].tool_results  # type: ignore[union-attr]
    reply = await agent("continue")
    assert reply.content[0].text == "after"  # type: ignore[union-attr]


async def test_an_interrupted_call_gets_error_results_before_the_next_one() -> None:
    gate = asyncio.Event()

    async def hang() -> str:
        """Never returns on its own."""
        await gate.wait()
        return "late"

    model = ScriptedModel([tool_call("hang"), "recovered"])
    agent = Agent(model=model, tools=[hang], counter=ApproximateCounter())
    task = asyncio.ensure_future(agent("go"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not agent.running
    assert (await agent("again")).content[0].text == "recovered"  # type: ignore[union-attr]
    results = list(results_of(model, 1).values())
    assert results[0].is_error and "interrupted" in results[0].text


async def test_compress_context_accepts_a_hint_block_or_text() -> None:
    model = ScriptedModel(["ok"])
    agent = make(model)
    await agent("hello")
    # Tiny conversation: below the trigger, a no-op whatever the hint.
    assert await agent.compress_context(instructions=HintBlock(hint="keep paths")) is None
    assert await agent.compress_context(instructions="keep paths") is None
    assert model.summary_requests == []
    with pytest.raises(UsageError, match="ContextConfig"):
        await agent.compress_context(context_config={"trigger_ratio": 0.5})  # type: ignore[arg-type]


async def test_context_config_is_replaceable_and_validated() -> None:
    agent = make(ScriptedModel(["a"]))
    agent.context_config = ContextConfig(
        trigger_ratio=0.5, reserve_ratio=0.1, context_buffer_ratio=0.1
    )
    assert agent.context_config.trigger_ratio == 0.5
    with pytest.raises(UsageError):
        agent.context_config = {"trigger_ratio": 0.5}  # type: ignore[assignment]


@pytest.mark.parametrize(
    "doc",
    [
        "Move a file.\n\nArgs:\n    source: Where it is now.\n    target: Where it goes,\n        relative to the root.\n\nReturns:\n    The new path.",
        "Move a file.\n\nParameters\n----------\nsource : str\n    Where it is now.\ntarget : str\n    Where it goes,\n    relative to the root.\n\nReturns\n-------\nstr\n    The new path.",
        "Move a file.\n\n:param source: Where it is now.\n:param target: Where it goes,\n    relative to the root.\n:returns: The new path.",
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_tool_schemas_read_google_numpy_and_sphinx_docstrings(doc: str) -> None:
    def move(source: str, target: str) -> str:
        return target

    move.__doc__ = doc
    schema = Tool.from_function(move).schema
    assert schema.description == "Move a file."
    properties = schema.input_schema["properties"]
    assert properties["source"]["description"] == "Where it is now."
    assert properties["target"]["description"] == "Where it goes, relative to the root."
