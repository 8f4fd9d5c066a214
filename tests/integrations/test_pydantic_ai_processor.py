"""What `ContextProcessor` hands pydantic-ai back, called directly on hand-built histories: the
exact parts of each request, the objects kept as they were, the manifest's counts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig, ObservedSession, ToolSchema
from ctxlab.tokens import ApproximateCounter
from tests.strategies import SETTINGS

pytest.importorskip("pydantic_ai")

from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ctxlab.integrations.pydantic_ai import ContextProcessor

CHUNK = "\n".join(f"line {n}: ERROR timeout in worker {n % 7}" for n in range(120))
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
SCHEMA = ToolSchema("read", "Read a chunk of the log.", {"type": "object", "properties": {}})


def _session(window: int = 32_000, **config: Any) -> ObservedSession:
    return ObservedSession(
        context_window=window, counter=ApproximateCounter(), config=ContextConfig(**config)
    )


def _process(processor: ContextProcessor, messages: list[ModelMessage]) -> list[ModelMessage]:
    return asyncio.run(processor(messages))


def _reads(count: int, tool: str = "read") -> list[ModelMessage]:
    """A run: the system prompt and task, then ``count`` calls of ``tool``, each answered."""
    history: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You read logs."), UserPromptPart("Read the log.")],
            instructions="Be brief.",
        )
    ]
    for n in range(count):
        call = ToolCallPart(tool, {"chunk": n}, tool_call_id=f"r{n}")
        history.append(ModelResponse(parts=[TextPart("Reading on."), call]))
        result = ToolReturnPart(tool, CHUNK, tool_call_id=f"r{n}")
        history.append(ModelRequest(parts=[result], instructions="Be brief."))
    return history


def test_a_compacted_first_request_keeps_the_agents_system_prompt() -> None:
    history = _reads(12)
    session = _session(6_000, trigger_ratio=0.5)
    out = _process(ContextProcessor(session), history)
    assert [i.kind for i in session.manifests[-1].items if i.placement == "summary"] == ["summary"]
    first = out[0]
    assert isinstance(first, ModelRequest) and first is not history[0]
    # The rebuilt first request (the summary) leads with the agent's own system prompt part ...
    assert first.parts[0] is history[0].parts[0]
    assert [type(p) for p in first.parts] == [SystemPromptPart, UserPromptPart]
    assert "summary" in str(first.parts[1].content).lower()
    # ... and only once, even though it is not the request it came in.
    system = [p for m in out for p in m.parts if isinstance(p, SystemPromptPart)]
    assert system == [history[0].parts[0]]


def test_a_rebuilt_last_request_keeps_the_runs_instructions_and_its_tool_name() -> None:
    history = _reads(1, tool="read_log")
    out = _process(ContextProcessor(_session(tool_result_limit=200)), history)
    # The call's result was cut: the last request is ctxlab's, not the agent's ...
    assert out[:2] == history[:2] and out[0] is history[0] and out[1] is history[1]
    last = out[-1]
    assert isinstance(last, ModelRequest) and last is not history[-1]
    (part,) = last.parts
    assert isinstance(part, ToolReturnPart) and len(str(part.content)) < len(CHUNK) / 2
    assert str(part.content).startswith(CHUNK[:150]) and "TRUNCATED" in str(part.content)
    # ... but it still carries the run's instructions and names the tool its call named.
    assert last.instructions == "Be brief."
    assert (part.tool_name, part.tool_call_id) == ("read_log", "r0")


def test_an_image_over_the_limit_is_said_in_the_request_and_the_kept_one_sent() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(["Look:", BinaryContent(PNG, media_type="image/png")])]),
        ModelResponse(parts=[TextPart("A square.")]),
        ModelRequest(
            parts=[UserPromptPart(["And this:", BinaryContent(PNG, media_type="image/jpeg")])]
        ),
    ]
    session = _session(max_image_num=1)
    out = _process(ContextProcessor(session), history)
    assert [t.kind for t in session.manifests[-1].transforms] == ["image_drop"]
    first = out[0]
    assert isinstance(first, ModelRequest) and first is not history[0]
    texts = [str(p.content) for p in first.parts if isinstance(p, UserPromptPart)]
    # The dropped image is a notice the model reads (the HintBlock's rendered text) ...
    assert texts[0] == "Look:"
    assert texts[1].startswith("<system-reminder>An image was removed from the context")
    assert "max_image_num=1" in texts[1]
    # ... and the image within the limit goes as it came: the agent's own request.
    assert out[1] is history[1] and out[2] is history[2]


def test_an_image_kept_in_a_rebuilt_request_is_still_the_image() -> None:
    # A tool result cut in the same turn rebuilds the request: the images ctxlab counted as sent
    # must reach the model as images, not as the text "[image]".
    image = BinaryContent(PNG, media_type="image/webp")  # the type given, not the bytes' own
    link = ImageUrl(url="https://example.com/chart.png")
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Take a screenshot.")]),
        ModelResponse(parts=[ToolCallPart("shot", {}, tool_call_id="s1")]),
        ModelRequest(
            parts=[
                ToolReturnPart("shot", "x" * 4_000, tool_call_id="s1"),
                UserPromptPart([image, link]),
            ]
        ),
    ]
    out = _process(ContextProcessor(_session(tool_result_limit=100)), history)
    last = out[-1]
    assert isinstance(last, ModelRequest) and last is not history[-1]
    sent = [c for p in last.parts if isinstance(p, UserPromptPart) for c in p.content]
    assert [(c.data, c.media_type) for c in sent if isinstance(c, BinaryContent)] == [
        (PNG, "image/webp")
    ]
    assert [c.url for c in sent if isinstance(c, ImageUrl)] == [link.url]
    assert "[image]" not in [str(p.content) for p in last.parts]


def test_a_reply_ctxlab_rebuilt_says_its_hints() -> None:
    # No pipeline stage puts a hint in a reply today; the conversion must still not drop one.
    from ctxlab.integrations.pydantic_ai import _response_parts
    from ctxlab.messages import AssistantMessage, HintBlock, TextBlock, ToolUseBlock

    hint = HintBlock(hint="Three results were cut to fit.")
    call = ToolUseBlock(id="c1", name="read", input={"chunk": 2})
    parts = _response_parts(AssistantMessage(content=(TextBlock(text="Done."), hint, call)))
    assert [(type(p), getattr(p, "content", None)) for p in parts[:2]] == [
        (TextPart, "Done."),
        (TextPart, hint.rendered),
    ]
    assert (parts[2].tool_name, parts[2].args, parts[2].tool_call_id) == (
        "read",
        {"chunk": 2},
        "c1",
    )


def test_the_tools_given_are_counted_in_every_request() -> None:
    with_tools, without = _session(), _session()
    history = _reads(2)
    for size in (1, 3, 5):  # a growing run, step by step
        _process(ContextProcessor(with_tools, tools=[SCHEMA]), history[:size])
        _process(ContextProcessor(without), history[:size])
    assert len(with_tools.manifests) == 3
    for counted, bare in zip(with_tools.manifests, without.manifests, strict=True):
        assert [i.id for i in counted.items if i.placement == "tools"] == ["tool/read"]
        assert counted.totals["tools"] > 0 and bare.totals["tools"] == 0
        extra = counted.estimated_input_tokens - bare.estimated_input_tokens
        assert extra == counted.totals["tools"]


# A history of calls and results: per turn, the tools called (each call answered), and whether
# the user speaks after the results (a request of its own: one ctxlab user turn with them).
turns = st.lists(
    st.tuples(st.lists(st.sampled_from(["read", "grep", "ls"]), max_size=3), st.booleans()),
    min_size=1,
    max_size=6,
)


def _history(drawn: list[tuple[list[str], bool]], size: int) -> list[ModelMessage]:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("Go.")])]
    for t, (calls, speaks) in enumerate(drawn):
        ids = [f"t{t}c{n}" for n in range(len(calls))]
        parts: list[Any] = [TextPart(f"Turn {t}.")]
        parts += [
            ToolCallPart(name, {"n": t}, tool_call_id=i) for name, i in zip(calls, ids, strict=True)
        ]
        history.append(ModelResponse(parts=parts))
        results = [
            ToolReturnPart(name, f"{name} {t}: " + "x" * size, tool_call_id=i)
            for name, i in zip(calls, ids, strict=True)
        ]
        history.append(ModelRequest(parts=results or [UserPromptPart("Go on.")]))
        if speaks and results:
            history.append(ModelRequest(parts=[UserPromptPart(f"And {t}.")]))
    return history


@SETTINGS
@given(drawn=turns, size=st.sampled_from([10, 3_000]))
def test_any_history_round_trips(drawn: list[tuple[list[str], bool]], size: int) -> None:
    history = _history(drawn, size)
    out = _process(ContextProcessor(_session(tool_result_limit=200)), history)
    # Every message ctxlab left unchanged goes back as pydantic-ai's own object ...
    if size == 10:
        assert all(a is b for a, b in zip(out, history, strict=True))
    calls: dict[str, str] = {}
    for message in out:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                calls[part.tool_call_id] = part.tool_name
            elif isinstance(part, ToolReturnPart):
                # ... every result follows its call and names the call's tool ...
                assert calls.get(part.tool_call_id) == part.tool_name
    # ... and none is lost.
    returned = [p.tool_call_id for m in out for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returned == [
        p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolReturnPart)
    ]


def test_two_requests_of_the_same_words_go_back_each_as_itself() -> None:
    # Matched by content alone, the second "Go on." stood in for the first: one object twice in
    # the request, which pydantic-ai then edits in place as the request being sent.
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Go.")]),
        ModelResponse(parts=[TextPart("Turn 0.")]),
        ModelRequest(parts=[UserPromptPart("Go on.")], instructions="first"),
        ModelResponse(parts=[TextPart("Turn 1.")]),
        ModelRequest(parts=[UserPromptPart("Go on.")], instructions="second"),
    ]
    out = _process(ContextProcessor(_session()), history)
    assert [id(m) for m in out] == [id(m) for m in history]


def test_a_request_of_system_prompts_alone_travels_with_the_next_one() -> None:
    # A history passed in may hold the system prompt as a request of its own: ctxlab reads it
    # as no message, yet every message it left unchanged still goes back as itself.
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("You read logs.")]),
        ModelRequest(parts=[UserPromptPart("Go.")]),
        ModelResponse(parts=[TextPart("Gone.")]),
        ModelRequest(parts=[UserPromptPart("Go on.")]),
    ]
    session = _session()
    out = _process(ContextProcessor(session), history)
    assert [id(m) for m in out] == [id(m) for m in history]
    assert session.transcript().system == "You read logs."


def test_a_usage_notice_is_a_request_of_its_own_with_the_runs_instructions() -> None:
    history = _reads(2)
    session = _session(6_000, trigger_ratio=0.5)
    processor = ContextProcessor(session)
    out = _process(processor, history)
    assert session.material_messages == 1
    # The history goes as it came; the notice follows as the request being sent, which is
    # where the model reads the run's instructions.
    assert [id(m) for m in out[:-1]] == [id(m) for m in history]
    notice = out[-1]
    assert isinstance(notice, ModelRequest) and notice.instructions == "Be brief."
    (part,) = notice.parts
    assert isinstance(part, UserPromptPart)
    assert str(part.content).startswith('<RUNTIME_STATE id="runtime/context_usage">')
    # Given back with the next turn (pydantic-ai keeps the processed list), it is not history.
    reply = ModelResponse(parts=[TextPart("Reading on.")])
    following = ModelRequest(parts=[UserPromptPart("Go on.")], instructions="Be brief.")
    _process(processor, [*out, reply, following])
    assert [m.role for m in session.transcript().messages][-3:] == ["user", "assistant", "user"]
    assert "RUNTIME_STATE" not in str(session.transcript().messages)


def test_observing_a_repaired_history_gives_the_agents_own_messages() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Read the log.")]),
        ModelResponse(parts=[ToolCallPart("read", {}, tool_call_id="open")]),
        ModelRequest(parts=[UserPromptPart("Never mind; finish.")]),
    ]
    session = ObservedSession(context_window=32_000, counter=ApproximateCounter(), mode="observe")
    out = _process(ContextProcessor(session), history)
    assert [id(m) for m in out] == [id(m) for m in history]
    assert session.manifests[-1].validation == "passed"


def test_a_reply_whose_old_arguments_were_cut_is_rebuilt_with_its_text_and_call() -> None:
    from ctxlab.config import CompactionPasses, TruncateArgsConfig

    long = "a line of the file\n" * 40
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Write the file.")]),
        ModelResponse(
            parts=[TextPart("Writing."), ToolCallPart("write", {"text": long}, tool_call_id="w1")]
        ),
        ModelRequest(parts=[ToolReturnPart("write", "ok", tool_call_id="w1")]),
        ModelResponse(parts=[TextPart("Written.")]),
        ModelRequest(parts=[UserPromptPart("Thanks.")]),
    ]
    cut = TruncateArgsConfig(trigger_messages=2, keep_messages=1, max_arg_length=100)
    session = _session(compaction=CompactionPasses(truncate_args=cut))
    out = _process(ContextProcessor(session), history)
    assert [t.kind for t in session.manifests[-1].transforms] == ["args_truncation"]
    reply = out[1]
    assert isinstance(reply, ModelResponse) and reply is not history[1]
    text, call = reply.parts
    assert isinstance(text, TextPart) and text.content == "Writing."
    assert isinstance(call, ToolCallPart)
    assert (call.tool_name, call.tool_call_id) == ("write", "w1")
    assert call.args == {"text": long[:20] + cut.truncation_text}
    # The rest went as it came.
    assert [id(m) for m in out[2:]] == [id(m) for m in history[2:]]
