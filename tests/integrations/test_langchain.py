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


def test_a_repaired_history_goes_out_as_the_manifest_describes_it() -> None:
    # An orphan result and an unanswered call in the agent's state: ctxlab repairs both, and
    # the model must receive that repaired request, not the framework's messages beside it.
    session = _session()
    model = _Model(messages=iter([AIMessage(content="Done.")]), sent=[])
    agent = create_agent(model, [read], middleware=[ContextMiddleware(session)])
    history = [
        HumanMessage("Read the log."),
        AIMessage(content="", tool_calls=[{"id": "open", "name": "read", "args": {"chunk": 1}}]),
        HumanMessage("Go on."),
        ToolMessage(content="stray output", tool_call_id="ghost"),
        HumanMessage("And finish."),
    ]
    agent.invoke({"messages": history})
    (sent,) = model.sent
    ids = [m.tool_call_id for m in sent if isinstance(m, ToolMessage)]
    assert ids == ["open"]  # the unanswered call answered, the orphan gone
    assert "stray output" not in str([m.content for m in sent])
    manifest = session.manifests[-1]
    assert manifest.validation == "passed"
    # Every message sent is one the manifest counted: its conversation, turn by turn.
    roles = ["assistant" if isinstance(m, AIMessage) else "user" for m in sent]
    turns = [r for n, r in enumerate(roles) if n == 0 or r != roles[n - 1]]
    assert turns == ["user", "assistant", "user"]


@pytest.mark.parametrize("mode", ["manage", "observe"])
def test_an_empty_reply_does_not_break_the_agent(mode: str) -> None:
    session = _session(mode)
    model = _Model(messages=iter([AIMessage(content="")]), sent=[])
    agent = create_agent(model, [read], middleware=[ContextMiddleware(session)])
    state = agent.invoke({"messages": [HumanMessage("Say nothing.")]})
    assert state["messages"][-1].content == ""
    assert len(session.manifests) == 1


def test_an_empty_reply_keeps_its_usage_on_its_step() -> None:
    session = _session()
    usage = {"input_tokens": 120, "output_tokens": 0, "total_tokens": 120}
    model = _Model(messages=iter([AIMessage(content="", usage_metadata=usage)]), sent=[])
    events: list[Any] = []
    session.subscribe(events.append)
    agent = create_agent(model, [read], middleware=[ContextMiddleware(session)])
    agent.invoke({"messages": [HumanMessage("Say nothing.")]})
    (response,) = [e for e in events if e.type == "model_response"]
    assert (
        response.usage.input_tokens == 120
        and response.request_id == session.manifests[0].request_id
    )


def test_observing_a_history_ctxlab_cannot_read_sends_the_agents_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.exceptions import MessageFormatError
    from ctxlab.integrations import langchain as adapter

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise MessageFormatError("a message ctxlab cannot read")

    monkeypatch.setattr(adapter, "load", unreadable)
    session = _session("observe")
    errors: list[Any] = []
    session.subscribe(lambda e: errors.append(e) if e.type == "error" else None)
    model = _Model(messages=iter([AIMessage(content="Fine.")]), sent=[])
    agent = create_agent(model, [read], middleware=[ContextMiddleware(session)])
    state = agent.invoke({"messages": [HumanMessage("Hello.")]})
    assert state["messages"][-1].content == "Fine."
    assert [m.content for m in model.sent[0]] == ["Hello."]
    assert isinstance(session.last_error, MessageFormatError) and len(errors) == 2
    # Managing, the same failure is the caller's to see.
    managed = create_agent(
        _Model(messages=iter([AIMessage(content="x")]), sent=[]),
        [read],
        middleware=[ContextMiddleware(_session("manage"))],
    )
    with pytest.raises(MessageFormatError, match="cannot read"):
        managed.invoke({"messages": [HumanMessage("Hello.")]})
