"""Deterministic models for tests and examples: `FunctionModel` and `ScriptedModel`. No network."""

from __future__ import annotations

import inspect
import itertools
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, HintBlock, ProviderUsage, TextBlock, ToolUseBlock
from ctxlab.messages._request import ModelRequest
from ctxlab.models._base import (
    Model,
    ModelResponse,
    Purpose,
    TextCallback,
    checked_call,
    emit_text,
    stop_reason_of,
)
from ctxlab.pipeline import Summarizer, SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCounter
from ctxlab.util._checks import shown

__all__ = ["FunctionModel", "RequestInfo", "ScriptedModel", "tool_call"]

_ids = itertools.count(1)
T = TypeVar("T")


def tool_call(
    name: str, input: Mapping[str, Any] | None = None, *, id: str | None = None
) -> ToolUseBlock:
    """A `ToolUseBlock` for scripts: ``tool_call("read_file", {"path": "a.py"})``."""
    # Unique across processes too: a resumed session must never see an id twice.
    call_id = id or f"call_{next(_ids):04d}_{uuid.uuid4().hex[:8]}"
    if input is not None and not isinstance(input, Mapping):
        msg = f"a tool call's input maps argument names to values, got {shown(input)}"
        raise UsageError(msg)
    try:
        return ToolUseBlock(id=call_id, name=name, input=dict(input or {}))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        msg = f"tool_call cannot make a call of {first['loc'][0]}={shown(first['input'])}: {first['msg']}"
        raise UsageError(msg) from exc


def _script(items: Iterable[T], name: str) -> Iterable[T]:
    # A script is a list of what to answer, in order; one reply alone is not a list of them.
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        msg = f"{name} must be a list, one item per request in order, got {shown(items)}"
        raise UsageError(msg)
    return items


@dataclass(frozen=True)
class RequestInfo:
    """What a `FunctionModel` function learns besides the request."""

    purpose: Purpose
    """``reasoning``, ``recovery`` or ``summary``."""
    index: int
    """0 for the model's first request, then 1, 2, ..."""


Reply = ModelResponse | AssistantMessage | str | Sequence[Any]


def _response(
    reply: Any, model: str, request: ModelRequest, counter: TokenCounter
) -> ModelResponse:
    if isinstance(reply, ModelResponse):
        return reply
    if isinstance(reply, str):
        message = AssistantMessage(content=reply)
    elif isinstance(reply, AssistantMessage):
        message = reply
    elif isinstance(reply, (ToolUseBlock, TextBlock)):
        message = AssistantMessage(content=(reply,))
    elif isinstance(reply, Sequence):
        parts = tuple(TextBlock(text=p) if isinstance(p, str) else p for p in reply)
        if not all(isinstance(p, (TextBlock, ToolUseBlock, HintBlock)) for p in parts):
            kinds = ", ".join(sorted({type(p).__name__ for p in parts}))
            msg = (
                f"a scripted reply list may hold str, TextBlock, ToolUseBlock (tool_call(...)) "
                f"or HintBlock items, got {kinds}"
            )
            raise UsageError(msg)
        message = AssistantMessage(content=parts)
    else:
        msg = (
            f"a scripted reply must be a str, AssistantMessage, ModelResponse, block or list of "
            f"blocks, got {type(reply).__name__}"
        )
        raise UsageError(msg)
    stop = stop_reason_of(message)
    # Usage as a provider would report it, from the local counter: lets tests check calibration.
    usage = ProviderUsage(
        input_tokens=sum(counter.count_text(m.model_dump_json()) for m in request.messages)
        + counter.count_text(request.system),
        output_tokens=counter.count_text(message.model_dump_json()),
    )
    return ModelResponse(message=message, stop_reason=stop, usage=usage, model=model)


class FunctionModel(Model):
    """A model whose answers come from ``fn(request, info)`` (sync or async).

    ``fn`` returns a str, an `AssistantMessage`, a `ModelResponse`, a block or a list of blocks,
    or raises (a `ModelError` to simulate provider failures). Summary requests go to
    ``summarizer`` when given, else to ``fn`` with ``info.purpose == "summary"``.
    """

    def __init__(
        self,
        fn: Callable[[ModelRequest, RequestInfo], Reply | Awaitable[Reply]],
        *,
        name: str = "function",
        context_window: int = 200_000,
        summarizer: Summarizer | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.context_window = context_window
        self.summarizer = summarizer
        self._counter = counter
        self.requests: list[ModelRequest] = []
        """Every request received, in order (summary requests included)."""

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        self.requests.append(request)
        reply = self.fn(request, RequestInfo(purpose, len(self.requests) - 1))
        if inspect.isawaitable(reply):
            reply = await reply
        response = _response(reply, self.name, request, self.counter)
        emit_text(response.message, on_text)
        return response

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        if self.summarizer is not None:
            return await self.summarizer(summary)
        return await super().summarize(summary, context=context)


class ScriptedModel(Model):
    """A model that plays back ``replies`` in order, one per reasoning request.

    A reply is a str, an `AssistantMessage`, a `ModelResponse`, a block, a list of blocks, or an
    exception instance (raised instead of answering). ``summaries`` scripts the summary requests
    the same way (mappings or exceptions); without it, summaries are extractive and deterministic.
    """

    def __init__(
        self,
        replies: Iterable[Reply | BaseException],
        *,
        summaries: Iterable[Mapping[str, Any] | BaseException] | None = None,
        name: str = "scripted",
        context_window: int = 200_000,
        counter: TokenCounter | None = None,
    ) -> None:
        self.replies = list(_script(replies, "replies"))
        self.summaries = None if summaries is None else list(_script(summaries, "summaries"))
        self.name = name
        self.context_window = context_window
        self._counter = counter
        self.requests: list[ModelRequest] = []
        """Every reasoning request received, in order."""
        self.summary_requests: list[SummaryRequest] = []
        """Every summary request received, in order."""

    def branch(self) -> ScriptedModel:
        """A new scripted model for a fork's branch, holding the replies and summaries not yet
        played: each branch plays the rest of the script from the fork on."""
        return ScriptedModel(
            list(self.replies),
            summaries=None if self.summaries is None else list(self.summaries),
            name=self.name,
            context_window=self.context_window,
            counter=self._counter,
        )

    @property
    def remaining(self) -> int:
        """Replies not yet played."""
        return len(self.replies)

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        self.requests.append(request)
        if not self.replies:
            msg = (
                f"ScriptedModel ran out of replies after {len(self.requests) - 1} requests; "
                "script one reply per reasoning request (end with a text reply to finish a call)"
            )
            raise UsageError(msg)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        response = _response(reply, self.name, request, self.counter)
        emit_text(response.message, on_text)
        return response

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        self.summary_requests.append(summary)
        if self.summaries is None:
            return await extractive_summarizer(summary)
        if not self.summaries:
            msg = "ScriptedModel ran out of scripted summaries; add more or pass summaries=None"
            raise UsageError(msg)
        answer = self.summaries.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer
