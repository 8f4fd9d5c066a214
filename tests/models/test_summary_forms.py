"""The two forms of a summary call (docs/concepts/cost.md): the cached form, the last request
again under its System and tools, when the span continues that request; otherwise the span
alone under no System and no tools — a piece of a span too (the pipeline sizes pieces for that
form), even when the last request is at hand."""

from __future__ import annotations

import json

from ctxlab import ContextConfig
from ctxlab.manifest import ManifestItem
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.models import (
    FunctionModel,
    cached_summary_request,
    summary_call,
    summary_manifest,
    summary_model_request,
)
from ctxlab.pipeline import SummaryRequest
from ctxlab.pipeline._summary_calls import summary_request_tokens
from ctxlab.tokens import ApproximateCounter, TokenCache

SYSTEM = "You fix bugs. " * 50
TOOLS = (ToolSchema("bash", "Run a command."),)


def _turn(n: int) -> tuple[AssistantMessage, UserMessage]:
    use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat part{n}.log"})
    result = ToolResultBlock(tool_use_id=f"c{n}", content=f"line {n}: ok\n" * 40)
    return AssistantMessage(content=(use,)), UserMessage(content=(result,))


def _conversation() -> tuple[UserMessage | AssistantMessage, ...]:
    out: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the failing test.")]
    for n in range(4):
        out.extend(_turn(n))
    return tuple(out)


def _ask(messages: tuple[UserMessage | AssistantMessage, ...], kept: int = 0) -> SummaryRequest:
    config = ContextConfig()
    span, tail = messages[: len(messages) - kept], messages[len(messages) - kept :]
    return SummaryRequest(
        span, None, config.summary_schema, config.compression_prompt, kept=tail, input_limit=10**6
    )


def test_a_piece_of_a_span_goes_alone_under_no_system_and_no_tools() -> None:
    cache = TokenCache(ApproximateCounter())
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=conversation, tools=TOOLS)
    piece = _ask(conversation[3:7])  # two turns from an assistant one: not the last request's
    assert cached_summary_request(piece, last) is None
    sent = summary_model_request(piece, last)
    assert (sent.system, sent.tools) == ("", ())
    opening = sent.messages[0]
    assert isinstance(opening, UserMessage)
    assert isinstance(opening.content[0], TextBlock)
    assert "summarized elsewhere" in opening.content[0].text
    assert sent.messages[1:4] == conversation[3:6]
    call = summary_call(piece, cache, 10**6, last, ())
    assert not call.cached
    assert call.request == sent
    assert [i.placement for i in call.items if i.placement in ("system", "tools")] == []
    # Within what the pipeline sized the piece for (the instruction counted as a message of its
    # own: a few tokens over), with the stand-in opening it — and no room for the System.
    sized = summary_request_tokens(piece, cache) + cache.message(opening)
    assert call.tokens <= sized < call.tokens + cache.text(SYSTEM)


def test_the_span_that_continues_the_last_request_goes_in_the_cached_form() -> None:
    cache = TokenCache(ApproximateCounter())
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=conversation[:7], tools=TOOLS)
    whole = _ask(conversation, kept=2)  # the last request, then a turn that arrived since
    sent = summary_model_request(whole, last)
    assert (sent.system, sent.tools) == (SYSTEM, TOOLS)
    assert sent.messages[:7] == conversation[:7]
    asked = sent.messages[-1]
    assert isinstance(asked, UserMessage)
    assert isinstance(asked.content[-1], TextBlock)
    assert "except its last 2 messages" in asked.content[-1].text
    call = summary_call(whole, cache, 10**6, last, ())
    assert call.cached
    # Too small a limit for that form: the span alone, under no System.
    alone = summary_call(whole, cache, call.tokens - 1, last, ())
    assert not alone.cached and (alone.request.system, alone.request.tools) == ("", ())
    assert alone.fits


async def test_a_live_model_sends_a_piece_under_no_system() -> None:
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=conversation, tools=TOOLS)
    answer = {"task_overview": "fix the test"}
    model = FunctionModel(lambda request, info: json.dumps(answer))
    assert await model.summarize(_ask(conversation[3:7]), context=last) == answer
    sent = model.requests[-1]
    assert (sent.system, sent.tools) == ("", ())
    await model.summarize(_ask(conversation, kept=2), context=last)
    assert (model.requests[-1].system, model.requests[-1].tools) == (SYSTEM, TOOLS)


def test_a_call_at_its_limit_is_sent_and_one_over_is_refused() -> None:
    cache = TokenCache(ApproximateCounter())
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=conversation[:7], tools=TOOLS)
    whole = _ask(conversation, kept=2)
    size = summary_call(whole, cache, 10**6, last, ()).tokens
    # Exactly at the limit: the cached form fits (the limit is what it may hold).
    exact = summary_call(whole, cache, size, last, ())
    assert exact.cached and exact.fits and exact.tokens == exact.limit == size
    manifest = summary_manifest(exact, "claude-sonnet-4-5", cache)
    assert (manifest.validation, manifest.error) == ("passed", None)
    assert manifest.estimated_input_tokens == size and manifest.input_limit == size
    # Neither form fits a limit below the span alone: refused, its manifest says why.
    alone = summary_call(whole, cache, 10**6, None, ()).tokens
    refused = summary_call(whole, cache, alone - 1, last, ())
    assert not refused.fits and not refused.cached
    failed = summary_manifest(refused, "claude-sonnet-4-5", cache)
    assert failed.validation == "budget_exceeded"
    assert failed.error == f"the summary request needs {alone} tokens; its limit is {alone - 1}"


def test_the_cached_form_carries_the_last_requests_unrecorded_part_the_span_alone_does_not() -> (
    None
):
    # A recording's requests carry what its file does not hold (18,800 tokens: Claude Code's
    # System prompt and tools); the cached form sends the last request's prefix again, so its
    # tokens are that part, the last request's System, and every message it sends.
    cache = TokenCache(ApproximateCounter())
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=conversation[:7], tools=())
    unrecorded = ManifestItem("unrecorded/harness", "unrecorded", "unrecorded", 18_800, "u")
    system = ManifestItem("system/system_prompt", "system", "system", 500, "s")
    whole = _ask(conversation, kept=2)
    call = summary_call(whole, cache, 10**6, last, (unrecorded, system))
    assert call.cached
    sent = sum(cache.message(m) for m in call.request.messages)
    assert call.tokens == 18_800 + 500 + sent
    assert call.items[:2] == (unrecorded, system)
    # The unrecorded part counts against the call's limit: one token less and the span goes
    # alone, under no System — and without the harness's part.
    alone = summary_call(whole, cache, call.tokens - 1, last, (unrecorded, system))
    assert not alone.cached
    assert alone.tokens == sum(cache.message(m) for m in alone.request.messages)
    assert all(i.placement not in ("unrecorded", "system") for i in alone.items)
