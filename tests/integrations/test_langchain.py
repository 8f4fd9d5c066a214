"""ctxlab's pipeline as a LangChain v1 agent middleware, driven by GenericFakeChatModel."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ContextConfig, ObservedSession
from ctxlab.tokens import ApproximateCounter

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import Field

from ctxlab.integrations.langchain import ContextMiddleware

READS = 10


class _Model(GenericFakeChatModel):
    """LangChain's fake chat model, recording what it is sent; tools bound as given."""

    sent: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.sent.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def read(chunk: int) -> str:
    """Read one chunk of the log."""
    return "\n".join(
        f"line {n}: ERROR timeout in worker {n % 7} (chunk {chunk})" for n in range(120)
    )


def _replies() -> list[AIMessage]:
    usage = {"input_tokens": 500, "output_tokens": 9, "total_tokens": 509}
    calls = [
        AIMessage(
            content="Reading on.",
            tool_calls=[{"id": f"c{n}", "name": "read", "args": {"chunk": n}}],
            usage_metadata=usage,
        )
        for n in range(READS)
    ]
    return [*calls, AIMessage(content="Done.", usage_metadata=usage)]


def _problems(messages: list[BaseMessage]) -> list[str]:
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    return [
        m.tool_call_id
        for m in messages
        if isinstance(m, ToolMessage) and m.tool_call_id not in calls
    ]


def _run(session: ObservedSession) -> tuple[_Model, dict[str, Any], list[Any]]:
    model = _Model(messages=iter(_replies()), sent=[])
    events: list[Any] = []
    session.subscribe(events.append)
    agent = create_agent(
        model, [read], system_prompt="You read logs.", middleware=[ContextMiddleware(session)]
    )
    state = agent.invoke({"messages": [HumanMessage("Read the log.")]})
    return model, state, events


def _session(mode: str = "manage") -> ObservedSession:
    return ObservedSession(
        context_window=6_000,
        counter=ApproximateCounter(),
        config=ContextConfig(trigger_ratio=0.5),
        mode=mode,  # type: ignore[arg-type]
    )


def test_a_managed_agent_sends_ctxlabs_requests_and_keeps_its_state() -> None:
    session = _session()
    model, state, events = _run(session)
    assert len(model.sent) == len(session.manifests) == READS + 1
    assert all(m.validation == "passed" for m in session.manifests)
    assert any(e.type == "compaction" for e in events)
    # The model got ctxlab's compacted requests, tool pairs whole ...
    assert all(_problems(sent) == [] for sent in model.sent)
    assert len(model.sent[-1]) < 2 * READS + 2
    assert "You read logs." in str(model.sent[-1][0].content)
    # ... while the agent's own state kept everything.
    assert sum(isinstance(m, ToolMessage) for m in state["messages"]) == READS
    assert session.resyncs == 0
    # Each reply's usage is on its step.
    usage = [e for e in events if e.type == "model_response"]
    assert [e.request_id for e in usage] == [m.request_id for m in session.manifests]
    assert all(e.usage.input_tokens == 500 for e in usage)
    # Tool schemas were counted in every request.
    assert all(m.totals["tools"] > 0 for m in session.manifests)


def test_an_observed_agent_sends_its_own_messages() -> None:
    session = _session("observe")
    model, _, events = _run(session)
    assert len(model.sent[-1]) == 2 * READS + 2  # system, prompt, every call and result
    assert any(e.type == "compaction" for e in events)
    assert session.resyncs == 0


async def test_the_async_path() -> None:
    session = _session()
    events: list[Any] = []
    session.subscribe(events.append)
    model = _Model(messages=iter(_replies()), sent=[])
    agent = create_agent(model, [read], middleware=[ContextMiddleware(session)])
    state = await agent.ainvoke({"messages": [HumanMessage("Read the log.")]})
    assert state["messages"][-1].content == "Done."
    assert len(session.manifests) == READS + 1
    assert all(_problems(sent) == [] for sent in model.sent)
    # Each reply's usage is on the request it answered, as on the sync path.
    usage = [e for e in events if e.type == "model_response"]
    assert [e.request_id for e in usage] == [m.request_id for m in session.manifests]
    assert [e.usage.input_tokens for e in usage] == [500] * (READS + 1)


def test_a_lab_watches_the_agent_live() -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    session = _session()
    lab = Lab(session)
    assert lab.steps.empty
    _run(session)
    steps = lab.steps
    assert len(steps) == READS + 1
    assert (steps["usage_total_input"] == 500).all()
    assert lab.controls.send_button.disabled
    assert "another framework" in lab.controls.status.value
