"""The `Model` base: one async request in, content blocks, stop reason and usage out.

A model also answers summary requests for compaction. The default `Model.summarize` sends the
compacted prefix with the compression prompt and the summary schema and reads one JSON object back;
adapters may do better (structured output, prompt-cache reuse).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.config._sections import ProviderEdits
from ctxlab.exceptions import MalformedReply, UsageError
from ctxlab.manifest import Purpose, Transform
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.models._retry import RetryWait
from ctxlab.pipeline import SummaryRequest
from ctxlab.pipeline._summary import summary_instruction
from ctxlab.tokens import TokenCounter, default_counter
from ctxlab.util._checks import shown

__all__ = [
    "Model",
    "ModelResponse",
    "Purpose",
    "SummaryAnswer",
    "emit_text",
    "local_response",
    "local_usage",
    "parse_summary_json",
    "stop_reason_of",
    "summary_instruction",
]

TextCallback = Callable[[str], None]


@dataclass(frozen=True)
class ModelResponse:
    """What a model returned for one request."""

    message: AssistantMessage
    """The assistant turn: text and tool calls."""
    stop_reason: str = "end_turn"
    """``end_turn``, ``tool_use``, ``max_tokens``, ..."""
    usage: ProviderUsage | None = None
    """Input, output, cache-read and cache-write tokens as the provider reported them."""
    model: str = ""
    """The model that answered."""
    provider_transforms: tuple[Transform, ...] = ()
    """What the provider itself did to the request before its model read it (Anthropic's
    ``context_management.applied_edits``): added to the manifest of the request it answered."""
    applied_edits: tuple[Mapping[str, Any], ...] = ()
    """The provider's own report of its edits, as it gave it (Anthropic's
    ``context_management.applied_edits``: ``type``, ``cleared_tool_uses``, ...): what the
    request was billed on is rebuilt from it (`Model.server_edits`)."""
    from_cache: bool = False
    """Whether the reply came from a `ResponseCache` rather than the provider: its ``usage`` is
    what the provider reported when it first answered (what the call costs), though nothing was
    spent on it this time."""
    retries: tuple[RetryWait, ...] = ()
    """The retries this reply took (a rate limit, an overloaded server), each with its wait."""


class SummaryAnswer(dict[str, Any]):
    """A summary's fields (the mapping `Model.summarize` returns), with the response that
    carried them: its usage is the summary call's bill, put on that call's manifest like any
    request's (None: made here, no provider answered)."""

    response: ModelResponse | None = None


class Model(ABC):
    """Base class of ctxlab's models.

    Subclasses implement `request`; `name`, `context_window` and `counter` describe the model to
    the preparation pipeline.
    """

    name: str = "model"
    """The model's identifier (shown in manifests)."""
    server_edits: ProviderEdits | None = None
    """The context editing the provider applies on its side to every request it is sent
    (`AnthropicModel(context_management=...)`); None: the request is read as sent."""
    context_window: int = 200_000
    """Tokens the model accepts (input + output)."""
    max_output_tokens: int | None = None
    """The response size each request asks for (None: the budget policy's reservation decides);
    a larger one reserves more of the window for the output."""
    _counter: TokenCounter | None = None

    @property
    def counter(self) -> TokenCounter:
        """The local counter used to estimate requests (cl100k_base BPE, by `default_counter`,
        unless overridden)."""
        if self._counter is None:
            self._counter = default_counter("cl100k_base")
        return self._counter

    exact_counts: bool = False
    """Whether the agent asks `count_tokens` for every reasoning request before sending it."""

    async def count_tokens(self, request: ModelRequest) -> int:
        """The provider's exact input-token count of ``request`` (models that can)."""
        msg = f"{type(self).__name__} cannot count tokens exactly; its estimates are all there is"
        raise UsageError(msg)

    def branch(self) -> Model:
        """The model a fork's branch uses (`ctxlab.fork`): this model itself when it keeps no
        state between requests (the provider adapters, `MemorylessModel`); a model that does
        (`DemoModel`'s plan, `ScriptedModel`'s script) returns a new one, so that branches
        running side by side never share its memory."""
        return self

    async def load_limits(self) -> None:
        """Learn the model's limits from the provider before the first request (the agent calls
        this at the start of every call; a model that knows its limits does nothing)."""
        return None

    @abstractmethod
    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        """Send ``request`` and return the response.

        ``on_text`` receives text as it streams, when the model streams. Raises `ModelError`
        (`ContextOverflowError` when the provider says the request is too long).
        """

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        """A structured summary of ``summary.messages`` (a mapping of the schema's fields).

        ``context`` is the last reasoning request: the call is sent in its cached form (that
        request again, then the instruction) when ``summary`` continues it, else as the span
        alone under no System and no tools (see `summary_model_request`).
        """
        request = summary_model_request(summary, context)
        response = await self.request(request, purpose="summary")
        text = "".join(b.text for b in response.message.content if isinstance(b, TextBlock))
        try:
            answer = SummaryAnswer(parse_summary_json(text))
        except MalformedReply as exc:
            exc.usage = response.usage  # paid for, though it did not read
            raise
        answer.response = response
        return answer


def sdk_client(make: Any, **arguments: Any) -> Any:
    """A provider SDK's client made from ``arguments``; what it refuses (a ``base_url`` no
    HTTP client parses, a ``max_retries`` of text) is a `UsageError` naming the SDK's reason."""
    try:
        return make(**arguments)
    except Exception as exc:  # the SDK's own checks: httpx's InvalidURL, a TypeError, ...
        msg = (
            f"the {make.__name__} client cannot be made from these arguments (check base_url and "
            f"max_retries): {type(exc).__name__}: {exc}"
        )
        raise UsageError(msg) from exc


def checked_client(client: object, endpoint: str, example: str) -> Any:
    """``client`` when it has the provider SDK's ``endpoint`` (``messages``, ``chat``): a client
    given in its place (a number, a dict) fails at once, not at the first request."""
    if client is None or isinstance(client, type) or not hasattr(client, endpoint):
        msg = f"client must be the provider SDK's client ({example}), got {shown(client)}"
        raise UsageError(msg)
    return client


def checked_call(request: object, on_text: object) -> None:
    """What every model's `Model.request` takes, checked before the model is asked: a
    `ModelRequest` (`ctxlab.prepare` makes one) and an ``on_text`` that can be called."""
    if isinstance(request, type) or not isinstance(request, ModelRequest):
        msg = f"a model answers a ModelRequest (ctxlab.prepare(...).request), got {shown(request)}"
        raise UsageError(msg)
    if on_text is not None and not callable(on_text):
        msg = f"on_text must be a function taking each text as it streams, got {shown(on_text)}"
        raise UsageError(msg)


def emit_text(message: AssistantMessage, on_text: TextCallback | None) -> None:
    """Hand the text of a whole (non-streamed) answer to ``on_text``, block by block."""
    if on_text is not None:
        for block in message.content:
            if isinstance(block, TextBlock):
                on_text(block.text)


def stop_reason_of(message: AssistantMessage) -> str:
    """The stop reason a provider gives ``message``: ``tool_use`` when it calls tools, else
    ``end_turn`` (for replies made here: offline models, scripts, recordings)."""
    return "tool_use" if message.tool_uses else "end_turn"


def local_response(
    request: ModelRequest, message: AssistantMessage, counter: TokenCounter, model: str
) -> ModelResponse:
    """An offline model's response: ``message``, its stop reason, and `local_usage`."""
    return ModelResponse(
        message=message,
        stop_reason=stop_reason_of(message),
        usage=local_usage(request, message, counter),
        model=model,
    )


def local_usage(
    request: ModelRequest, message: AssistantMessage, counter: TokenCounter
) -> ProviderUsage:
    """Usage as an offline model reports it: the request's messages (as JSON) and System text,
    and the answer, counted by ``counter`` — a provider-like figure beside ctxlab's estimate."""
    rendered = "".join(m.model_dump_json() for m in request.messages) + request.system
    return ProviderUsage(
        input_tokens=counter.count_text(rendered),
        output_tokens=counter.count_text(message.model_dump_json()),
    )


_CONTINUED = "(An earlier part of this conversation is summarized elsewhere; it goes on here.)"


def summary_model_request(summary: SummaryRequest, context: ModelRequest | None) -> ModelRequest:
    """The request that asks a model for ``summary``, in one of two forms. With ``context``
    (the last request, whose prefix the provider has cached) and a span that continues it: the
    cached form (`cached_summary_request`). Otherwise the span alone: the compacted messages
    with the instruction after them, under no System and no tools — also when ``context`` is
    given but the span does not continue its conversation (a piece of a span summarized in
    pieces): the form the pipeline sizes such pieces for. With a ``template``: that text alone,
    ``{messages}`` replaced by the span as a transcript, also under no System."""
    cached = cached_summary_request(summary, context)
    return cached if cached is not None else _span_alone(summary)


def _span_alone(summary: SummaryRequest) -> ModelRequest:
    # No System and no tools: the span is all the summarizer needs, and what the pipeline's
    # pieces are sized for (`summary_request_tokens`).
    ask = TextBlock(text=summary_instruction(summary))
    if summary.template is not None:
        history = summary.template.replace("{messages}", transcript_text(summary.messages))
        messages: list[UserMessage | AssistantMessage] = [
            UserMessage(content=(TextBlock(text=history), ask))
        ]
    else:
        messages = list(summary.messages)
        if messages and not isinstance(messages[0], UserMessage):
            # A piece of a span may start at an assistant turn; a request may not.
            messages.insert(0, UserMessage(content=(TextBlock(text=_CONTINUED),)))
        if messages and isinstance(messages[-1], UserMessage):
            messages[-1] = UserMessage(content=(*messages[-1].content, ask))
        else:
            messages.append(UserMessage(content=(ask,)))
    return ModelRequest(system="", messages=tuple(messages), tools=())


def cached_summary_request(
    summary: SummaryRequest, context: ModelRequest | None
) -> ModelRequest | None:
    """The cached form of the request for ``summary``: ``context``'s messages again (up to its
    per-request material: the provider's cache holds them), under its System and tools, then
    what arrived since and the instruction to summarize all but the kept tail — or None when
    ``summary`` does not continue ``context`` (no context, a ``template``, a piece of the span,
    a summary leading ``context`` that is not the span's previous one)."""
    if summary.template is not None:
        return None
    return _after_cached_prefix(summary, context)


def _after_cached_prefix(
    summary: SummaryRequest, context: ModelRequest | None
) -> ModelRequest | None:
    # The last request's messages (up to its per-request material) are in the provider's cache:
    # sent again first, with what arrived since and the instruction after them, the summary
    # call reads them at the cache price instead of paying the whole span again.
    if context is None:
        return None
    sent = list(context.messages[: len(context.messages) - context.material_messages])
    previous = summary.previous_summary
    # The summary's own message (built once per summary: the message the last request led
    # with, found by identity), not a new one built and checked at every call.
    lead = previous.message if previous else None
    conversation = sent[1:] if lead is not None and sent[:1] == [lead] else sent
    full = (*summary.messages, *summary.kept)
    if (lead is not None and sent[:1] != [lead]) or len(conversation) > len(full):
        return None
    if any(a.role != b.role for a, b in zip(conversation, full, strict=False)):
        return None
    messages = [*sent, *full[len(conversation) :]]
    ask = TextBlock(
        text=summary_instruction(summary)
        + f"\n\nSummarize the conversation above except its last {len(summary.kept)} messages, "
        "which stay in your context."
    )
    if messages and isinstance(messages[-1], UserMessage):
        messages[-1] = UserMessage(content=(*messages[-1].content, ask))
    else:
        messages.append(UserMessage(content=(ask,)))
    return ModelRequest(system=context.system, messages=tuple(messages), tools=context.tools)


def transcript_text(messages: Sequence[UserMessage | AssistantMessage]) -> str:
    """Messages as a plain transcript (``role: text``, tool calls and results included)."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                lines.append(f"{message.role}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                lines.append(f"{message.role} called {block.name} {block.input_json}")
            elif isinstance(block, ToolResultBlock):
                lines.append(f"tool result ({block.tool_use_id}): {block.text}")
    return "\n".join(lines)


def parse_summary_json(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``; `MalformedReply` saying what was found otherwise (the
    summarizer retries, then falls back, as for any failed summary call)."""
    if not isinstance(text, str):
        msg = f"a summary answer is text, got {shown(text)}"
        raise UsageError(msg)
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    preview = text[:200].replace("\n", " ")
    msg = f"the summary answer holds no JSON object: {preview!r}"
    raise MalformedReply(msg)
