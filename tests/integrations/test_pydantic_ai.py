"""ctxlab's pipeline inside a pydantic-ai agent, driven by pydantic-ai's own FunctionModel."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ContextConfig, ObservedSession, ToolSchema
from ctxlab.tokens import ApproximateCounter

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities.process_history import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ctxlab.integrations.pydantic_ai import ContextProcessor

READS = 12
SCHEMA = ToolSchema("read", "Read a chunk of the log.", {"type": "object", "properties": {}})


def _pairs_problems(messages: list[ModelMessage]) -> list[str]:
    """What a provider would refuse: a tool return whose call is not in an earlier response."""
    calls: set[str] = set()
    problems = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                calls.add(part.tool_call_id)
            elif isinstance(part, ToolReturnPart) and part.tool_call_id not in calls:
                problems.append(part.tool_call_id)
    return problems


def _agent(processor: ContextProcessor, seen: list[list[ModelMessage]]) -> Agent[None, str]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        if len(seen) > READS:
            return ModelResponse(parts=[TextPart(f"Read everything ({done} results in view).")])
        return ModelResponse(
            parts=[TextPart("Reading on."), ToolCallPart("read", {}, tool_call_id=f"r{len(seen)}")]
        )

    agent = Agent(
        FunctionModel(model),
        instructions="You read logs.",
        capabilities=[ProcessHistory(processor)],
    )

    @agent.tool_plain
    def read() -> str:
        """Read a chunk of the log."""
        return "\n".join(f"line {n}: ERROR timeout in worker {n % 7}" for n in range(120))

    return agent


def _watched(**options: Any) -> tuple[ObservedSession, list[Any], list[list[ModelMessage]]]:
    """A session watching a 6,000-token window (trigger 0.5), the events it emits, and a list
    for the requests the model will see."""
    session = ObservedSession(
        context_window=6_000,
        counter=ApproximateCounter(),
        config=ContextConfig(trigger_ratio=0.5),
        **options,
    )
    events: list[Any] = []
    session.subscribe(events.append)
    return session, events, []


async def test_a_managed_agent_sends_ctxlabs_requests() -> None:
    session, events, seen = _watched(name="log reader")
    run = await _agent(ContextProcessor(session, tools=[SCHEMA]), seen).run("Read the log.")
    assert run.output.startswith("Read everything")
    assert len(session.manifests) == len(seen) == READS + 1
    assert all(m.validation == "passed" for m in session.manifests)
    # The model saw ctxlab's requests: compacted, and never a result without its call.
    compacted = [e for e in events if e.type == "compaction"]
    assert compacted, "a 6k window must compact twelve 1.2k-token results"
    # Each compaction graded on the framework's own history: the task stays verbatim.
    kept = [e.record.retention for e in compacted]
    assert all(k is not None and k["task"].share == 1.0 for k in kept)
    assert all(_pairs_problems(messages) == [] for messages in seen)
    assert len(seen[-1]) < 2 * READS + 1
    summary = seen[-1][0]
    assert isinstance(summary, ModelRequest)
    assert any(
        isinstance(p, UserPromptPart) and "summary" in str(p.content).lower() for p in summary.parts
    )
    # Instructions still reach the model on a rebuilt request; no history was lost track of.
    assert all(m[-1].instructions == "You read logs." for m in seen)  # type: ignore[union-attr]
    assert session.resyncs == 0
    # The durable history holds everything the agent did.
    transcript = session.transcript()
    assert sum(len(m.tool_uses) for m in transcript.messages if m.role == "assistant") == READS  # type: ignore[union-attr]


async def test_an_observed_agent_sends_its_own_messages() -> None:
    session, events, seen = _watched(mode="observe")
    await _agent(ContextProcessor(session, tools=[SCHEMA]), seen).run("Read the log.")
    assert len(session.manifests) == READS + 1
    # Untouched: the last request holds every call and result the agent made.
    assert len(seen[-1]) == 2 * READS + 1
    # ... while the Lab shows what ctxlab would have sent.
    assert any(e.type == "compaction" for e in events)
    assert session.resyncs == 0


async def test_usage_of_the_replies_goes_on_their_requests() -> None:
    from pydantic_ai.usage import RequestUsage

    session = ObservedSession(context_window=50_000, counter=ApproximateCounter())
    events: list[Any] = []
    session.subscribe(events.append)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=100 + len(messages), output_tokens=5)
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read", {}, tool_call_id="c1")], usage=usage)
        return ModelResponse(parts=[TextPart("done")], usage=usage)

    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(ContextProcessor(session))])

    @agent.tool_plain
    def read() -> str:
        """Read."""
        return "ok"

    await agent.run("go")
    responses = [e for e in events if e.type == "model_response"]
    # The first reply's usage arrives with the second request (the processor sees it then).
    assert [(e.request_id, e.usage.input_tokens) for e in responses] == [("step-0", 101)]


def _session(mode: str) -> ObservedSession:
    return ObservedSession(
        context_window=32_000,
        counter=ApproximateCounter(),
        mode=mode,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("mode", ["manage", "observe"])
async def test_an_image_only_prompt_goes_to_the_model(mode: str) -> None:
    from pydantic_ai.messages import BinaryContent

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("A black square.")])

    session = _session(mode)
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(ContextProcessor(session))])
    result = await agent.run([BinaryContent(data=png, media_type="image/png")])
    assert result.output == "A black square."
    (prompt,) = [p for m in seen[0] for p in m.parts if isinstance(p, UserPromptPart)]
    assert isinstance(prompt.content, list) and prompt.content[0].data == png
    # ctxlab counted the image in the request it describes (up to 1,600 tokens, as Claude's).
    from ctxlab.messages import ImageBlock

    (message,) = session.transcript().messages
    assert isinstance(message.content[0], ImageBlock)
    assert session.manifests[-1].validation == "passed"
    assert session.manifests[-1].estimated_input_tokens > 1_000


async def test_a_retry_for_an_output_that_failed_validation_round_trips_in_manage_mode() -> None:
    from pydantic_ai.messages import RetryFeedbackPart

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(seen) == 1:
            return ModelResponse(parts=[TextPart("forty-two")])  # no output: pydantic-ai retries
        (output,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(output.name, {"response": 42})])

    session = _session("manage")
    agent = Agent(
        FunctionModel(model),
        output_type=int,
        capabilities=[ProcessHistory(ContextProcessor(session))],
    )
    result = await agent.run("How many?")
    assert result.output == 42
    assert len(session.manifests) == 2
    # ctxlab counted the framework's feedback as a user turn ...
    assert [m.role for m in session.transcript().messages] == ["user", "assistant", "user"]
    # ... and hands the request holding it back as the framework's own object.
    history = result.all_messages()[:3]
    assert any(isinstance(p, RetryFeedbackPart) for p in history[2].parts)
    processed = await ContextProcessor(_session("manage"))(history)
    assert processed[2] is history[2]


async def test_observing_a_history_ctxlab_cannot_read_sends_the_agents_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.exceptions import MessageFormatError
    from ctxlab.integrations import pydantic_ai as adapter

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise MessageFormatError("a message ctxlab cannot read")

    monkeypatch.setattr(adapter, "load", unreadable)
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("Fine.")])

    session = _session("observe")
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(ContextProcessor(session))])
    assert (await agent.run("Hello.")).output == "Fine."
    assert isinstance(session.last_error, MessageFormatError)
    managed = Agent(
        FunctionModel(model), capabilities=[ProcessHistory(ContextProcessor(_session("manage")))]
    )
    with pytest.raises(MessageFormatError, match="cannot read"):
        await managed.run("Hello.")
