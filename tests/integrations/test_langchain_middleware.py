"""What `ContextMiddleware.wrap_model_call` hands the model, called directly with hand-built
LangChain requests: the exact messages sent, the objects kept as they were, what is recorded."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig, ObservedSession
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.tokens import IMAGE_TOKENS, ApproximateCounter
from tests.strategies import SETTINGS

pytest.importorskip("langchain.agents")

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from ctxlab.integrations.langchain import ContextMiddleware, _to_langchain

BIG = "\n".join(f"line {n}: ERROR timeout in worker {n % 7}" for n in range(120))


def _session(window: int = 32_000, **config: Any) -> ObservedSession:
    return ObservedSession(
        context_window=window, counter=ApproximateCounter(), config=ContextConfig(**config)
    )


def _call(
    session: ObservedSession,
    messages: list[BaseMessage],
    *,
    system: str | None = None,
    reply: list[BaseMessage] | None = None,
) -> ModelRequest:
    """The request the model got when the middleware handled ``messages``."""
    got: list[ModelRequest] = []

    def handler(request: ModelRequest) -> ModelResponse:
        got.append(request)
        return ModelResponse(result=reply or [AIMessage("ok")])

    request = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])),
        messages=messages,
        system_message=SystemMessage(system) if system is not None else None,
    )
    ContextMiddleware(session).wrap_model_call(request, handler)
    (sent,) = got
    return sent


def _call_of(call_id: str, name: str = "read") -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"id": call_id, "name": name, "args": {}, "type": "tool_call"}]
    )


def test_a_rebuilt_result_of_a_failed_tool_stays_an_error() -> None:
    history: list[BaseMessage] = [
        HumanMessage("Read both logs."),
        AIMessage(
            "",
            tool_calls=[
                {"id": "bad", "name": "read", "args": {}, "type": "tool_call"},
                {"id": "good", "name": "read", "args": {}, "type": "tool_call"},
            ],
        ),
        ToolMessage(BIG, tool_call_id="bad", status="error"),
        ToolMessage(BIG, tool_call_id="good"),
    ]
    sent = _call(_session(tool_result_limit=200), history).messages
    results = [m for m in sent if isinstance(m, ToolMessage)]
    # Both results were cut (rebuilt by ctxlab), each keeping its outcome.
    assert all(m not in history for m in results)
    for result in results:
        text = str(result.content)
        assert len(text) < len(BIG) / 2 and text.startswith(BIG[:200]) and "TRUNCATED" in text
    assert [(m.tool_call_id, m.status) for m in results] == [("bad", "error"), ("good", "success")]


def test_the_system_message_is_read_and_counted() -> None:
    session, bare = _session(), _session()
    history: list[BaseMessage] = [HumanMessage("Hello.")]
    _call(session, history, system="You read logs, carefully and at length.")
    _call(bare, history)
    assert session.transcript().system == "You read logs, carefully and at length."
    system = session.manifests[-1].totals["system"]
    assert system > 0 and bare.manifests[-1].totals["system"] == 0
    extra = session.manifests[-1].estimated_input_tokens - bare.manifests[-1].estimated_input_tokens
    assert extra == system


def test_the_reply_recorded_is_the_last_ai_message_of_the_result() -> None:
    session = _session()
    events: list[Any] = []
    session.subscribe(events.append)
    early = AIMessage(
        "a draft", usage_metadata={"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}
    )
    final = AIMessage(
        "the answer", usage_metadata={"input_tokens": 90, "output_tokens": 3, "total_tokens": 93}
    )
    _call(
        session, [HumanMessage("Answer.")], reply=[early, ToolMessage("x", tool_call_id="o"), final]
    )
    (response,) = [e for e in events if e.type == "model_response"]
    assert response.message.content[0].text == "the answer" and response.usage.input_tokens == 90


def test_an_assistant_message_ctxlab_rebuilt_says_its_hints_and_keeps_its_calls() -> None:
    # No pipeline stage puts a hint in a reply today; the conversion must still not drop one.
    hint = HintBlock(hint="Three results were cut to fit.")
    call = ToolUseBlock(id="c1", name="read", input={"chunk": 2})
    (sent,) = _to_langchain(AssistantMessage(content=(TextBlock(text="Done."), hint, call)))
    assert isinstance(sent, AIMessage)
    assert sent.content == f"Done.\n{hint.rendered}"
    assert [(c["id"], c["name"], c["args"]) for c in sent.tool_calls] == [
        ("c1", "read", {"chunk": 2})
    ]


def test_observing_a_repaired_history_sends_the_agents_own_messages() -> None:
    # ctxlab repairs the orphan result in what it would send; observing, the model gets the
    # agent's messages, objects and all.
    history: list[BaseMessage] = [
        HumanMessage("Read the log."),
        ToolMessage("stray output", tool_call_id="ghost"),
        AIMessage("Nothing to read."),
        HumanMessage("Finish."),
    ]
    session = ObservedSession(context_window=32_000, counter=ApproximateCounter(), mode="observe")
    sent = _call(session, history).messages
    assert [id(m) for m in sent] == [id(m) for m in history]
    assert session.manifests[-1].validation == "passed"


def test_a_user_turn_ctxlab_rebuilt_keeps_its_hints_and_its_images() -> None:
    image = ImageBlock(source=Base64ImageSource(media_type="image/png", data="iVBORw0KGgo="))
    hint = HintBlock(hint="An image was removed.")
    sent = _to_langchain(UserMessage(content=(TextBlock(text="Look:"), image, hint)))
    assert [type(m) for m in sent] == [HumanMessage] * 3
    assert [m.content for m in sent] == [
        "Look:",
        [{"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}],
        hint.rendered,
    ]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
IMAGE_FORMS = {
    "openai": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    "standard": {"type": "image", "base64": PNG, "mime_type": "image/png"},
    "data block (0.3)": {
        "type": "image",
        "source_type": "base64",
        "data": PNG,
        "mime_type": "image/png",
    },
    "anthropic": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    },
}


def _as_openai(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    # LangChain's own conversion, as a chat model integration reads the request.
    from langchain_core.messages.utils import convert_to_openai_messages

    return list(convert_to_openai_messages(messages))  # type: ignore[arg-type]


@pytest.mark.parametrize("form", IMAGE_FORMS)
def test_managing_a_history_with_an_orphan_result_still_sends_the_users_image(form: str) -> None:
    # The orphan result makes ctxlab send its own (repaired) messages: the image went as
    # nothing at all (read as empty text), though it held a wave before (issue 51).
    history: list[BaseMessage] = [
        HumanMessage("Hi."),
        ToolMessage("stray output", tool_call_id="ghost"),
        AIMessage("Hello."),
        HumanMessage([{"type": "text", "text": "What is in it?"}, IMAGE_FORMS[form]]),
    ]
    session = _session()
    sent = _call(session, history).messages
    assert not {id(m) for m in sent} & {id(m) for m in history}  # rebuilt: it was repaired
    images = [
        part["image_url"]["url"]
        for message in _as_openai(sent)
        for part in (message["content"] if isinstance(message["content"], list) else ())
        if part.get("type") == "image_url"
    ]
    assert images == [f"data:image/png;base64,{PNG}"]
    # And ctxlab counted what it sent: the image is in its transcript and its manifest.
    (user,) = [
        m
        for m in session.transcript().messages
        if any(isinstance(b, ImageBlock) for b in m.content)
    ]
    assert [b.type for b in user.content] == ["text", "image"]
    assert session.manifests[-1].validation == "passed"


def test_an_image_in_the_history_is_counted_whoever_sends_it() -> None:
    # Without an orphan the agent's own message goes out: its image is counted all the same.
    plain, pictured = _session(), _session()
    _call(plain, [HumanMessage("What is in it?")])
    sent = _call(
        pictured,
        [HumanMessage([{"type": "text", "text": "What is in it?"}, IMAGE_FORMS["standard"]])],
    ).messages
    assert isinstance(sent[0].content, list) and sent[0].content[1] == IMAGE_FORMS["standard"]
    grew = (
        pictured.manifests[-1].totals["conversation"] - plain.manifests[-1].totals["conversation"]
    )
    assert grew == IMAGE_TOKENS


def test_a_tool_result_that_shows_an_image_keeps_it_when_rebuilt() -> None:
    shown = [{"type": "text", "text": "the chart:"}, IMAGE_FORMS["standard"]]
    history: list[BaseMessage] = [
        HumanMessage("Plot it."),
        ToolMessage("stray output", tool_call_id="ghost"),
        _call_of("c1", "plot"),
        ToolMessage(shown, tool_call_id="c1"),  # type: ignore[arg-type]
    ]
    sent = _call(_session(), history).messages
    (result,) = [m for m in _as_openai(sent) if m["role"] == "tool"]
    assert result["content"] == [
        {"type": "text", "text": "the chart:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]


def test_a_repeated_message_goes_back_each_as_itself() -> None:
    history: list[BaseMessage] = [
        HumanMessage("Go."),
        AIMessage("Turn 0."),
        HumanMessage("Go on.", id="first"),
        AIMessage("Turn 1."),
        HumanMessage("Go on.", id="second"),
    ]
    sent = _call(_session(), history).messages
    assert [id(m) for m in sent] == [id(m) for m in history]


# A history of calls and results: per turn, each call's outcome (True: the tool failed), and
# whether the user speaks after the results (one user turn for LangChain's tool and human messages).
turns = st.lists(
    st.tuples(st.lists(st.booleans(), max_size=3), st.booleans()), min_size=1, max_size=6
)


def _history(drawn: list[tuple[list[bool], bool]], size: int) -> list[BaseMessage]:
    history: list[BaseMessage] = [HumanMessage("Go.")]
    for t, (outcomes, speaks) in enumerate(drawn):
        ids = [f"t{t}c{n}" for n in range(len(outcomes))]
        calls = [{"id": i, "name": f"tool{t}", "args": {"n": t}, "type": "tool_call"} for i in ids]
        history.append(AIMessage(f"Turn {t}.", tool_calls=calls))
        for i, failed in zip(ids, outcomes, strict=True):
            status = "error" if failed else "success"
            history.append(ToolMessage(f"{i}: " + "x" * size, tool_call_id=i, status=status))
        if speaks or not outcomes:
            history.append(HumanMessage(f"Go on ({t})."))
    return history


@SETTINGS
@given(drawn=turns, size=st.sampled_from([10, 3_000]))
def test_any_history_round_trips(drawn: list[tuple[list[bool], bool]], size: int) -> None:
    history = _history(drawn, size)
    sent = _call(_session(tool_result_limit=200), history).messages
    # Every message ctxlab left unchanged goes back as LangChain's own object ...
    if size == 10:
        assert all(a is b for a, b in zip(sent, history, strict=True))
    calls: set[str] = set()
    for message in sent:
        if isinstance(message, AIMessage):
            calls.update(c["id"] for c in message.tool_calls)
        elif isinstance(message, ToolMessage):
            assert message.tool_call_id in calls  # ... no result before its call ...
    # ... and every result is there, with its outcome.
    outcomes = [(m.tool_call_id, m.status) for m in sent if isinstance(m, ToolMessage)]
    assert outcomes == [(m.tool_call_id, m.status) for m in history if isinstance(m, ToolMessage)]


async def test_the_async_path_reads_the_system_message_and_counts_the_tools() -> None:
    from langchain_core.tools import tool

    @tool
    def read(chunk: int) -> str:
        """Read one chunk of the log."""
        return ""

    got: list[ModelRequest] = []

    async def handler(request: ModelRequest) -> ModelResponse:
        got.append(request)
        return ModelResponse(result=[AIMessage("ok")])

    session = _session()
    request = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])),
        messages=[HumanMessage("Hello.")],
        system_message=SystemMessage("You read logs."),
        tools=[read],
    )
    await ContextMiddleware(session).awrap_model_call(request, handler)
    assert session.transcript().system == "You read logs."
    assert [t.name for t in session.transcript().tools] == ["read"]
    totals = session.manifests[-1].totals
    assert totals["system"] > 0 and totals["tools"] > 0
    assert [i.id for i in session.manifests[-1].items if i.placement == "tools"] == ["tool/read"]
