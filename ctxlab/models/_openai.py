"""`OpenAIModel`: OpenAI Chat Completions through the official ``openai`` SDK — and so any
OpenAI-compatible server (vLLM, Ollama, LM Studio, ...) through ``base_url``.

The SDK is an optional extra (``pip install 'ctxlab[openai]'``), imported when a model is made.
Errors become ctxlab's with the SDK's exception as their cause; a request over the model's
context length becomes `ContextOverflowError`, which the agent recovers from.

Chat Completions has no context management of its own: ``truncation`` and server compaction
(``context_management: [{"type": "compaction", ...}]``) are the Responses API's, which this
model does not speak. Their semantics run as ctxlab policies instead (presets
``openai_truncation`` and ``openai_compaction``), in replays, what-ifs and live sessions alike.
"""

from __future__ import annotations

import os
from typing import Any

from ctxlab.exceptions import (
    ContextOverflowError,
    MalformedReply,
    ModelError,
    OverloadedError,
    RateLimitError,
    UsageError,
)
from ctxlab.messages import ProviderUsage
from ctxlab.messages._request import ModelRequest
from ctxlab.models._base import (
    Model,
    ModelResponse,
    Purpose,
    TextCallback,
    checked_call,
    checked_client,
    emit_text,
    sdk_client,
)
from ctxlab.models._openai_format import assistant_from_openai, request_to_openai

__all__ = ["OpenAIModel"]

_OVERFLOW = ("context_length_exceeded", "maximum context length", "context length", "too long")


class OpenAIModel(Model):
    """A Chat Completions model (OpenAI, or any server that speaks the API).

    Args:
        model: The model name, e.g. ``"gpt-4o"`` or a local model's name.
        api_key: The key; ``OPENAI_API_KEY`` when omitted (a placeholder is used with
            ``base_url``, as local servers need none).
        base_url: An OpenAI-compatible server, e.g. ``http://localhost:8000/v1``.
        client: An existing ``openai.AsyncOpenAI`` (api_key and base_url are then ignored).
        context_window: The model's window (128,000 when omitted: set it for local models).
        max_tokens: Output tokens per request (reserved in the window when set).
        stream: Stream responses (text arrives as ``text_delta`` events).
        max_retries: The SDK's own retries of transient errors.
        **parameters: Passed to every request as they are (``temperature``, ``seed``, ...).
    """

    def __init__(
        self,
        model: str = "gpt-4o",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        context_window: int = 128_000,
        max_tokens: int | None = None,
        stream: bool = False,
        max_retries: int = 2,
        **parameters: Any,
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            msg = "OpenAIModel needs the openai SDK: pip install 'ctxlab[openai]'"
            raise UsageError(msg) from exc
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY") or ("local" if base_url else None)
            if not key:
                msg = "OpenAIModel needs an API key: set OPENAI_API_KEY or pass api_key=..."
                raise UsageError(msg)
            client = sdk_client(
                openai.AsyncOpenAI, api_key=key, base_url=base_url, max_retries=max_retries
            )
        self.client = checked_client(client, "chat", "openai.AsyncOpenAI()")
        self._sdk_error: type[Exception] = openai.OpenAIError
        """The SDK's errors: translated to ctxlab's; anything else propagates as it is."""
        self.name = model
        self.context_window = context_window
        self.max_output_tokens = max_tokens
        self.stream = stream
        self.parameters = parameters

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request``."""
        checked_call(request, None)
        payload = {"model": self.name, **request_to_openai(request), **self.parameters}
        if self.max_output_tokens is not None:
            payload["max_tokens"] = self.max_output_tokens
        return payload

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        payload = self.payload(request)
        try:
            if self.stream:
                return await self._streamed(payload, on_text)
            completion = await self.client.chat.completions.create(**payload)
        except self._sdk_error as exc:
            raise _translate(exc) from exc
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            # A body the SDK cannot read (not JSON, not UTF-8, no choices) fails it with an
            # error of Python's own (json's, the codec's): the reply is malformed.
            raise _malformed(exc) from exc
        try:
            choice = completion.choices[0]
            reply, finish = choice.message, choice.finish_reason
            model = completion.model
        except (TypeError, AttributeError, KeyError, IndexError) as exc:
            raise _malformed(exc) from exc
        message = assistant_from_openai(reply)
        emit_text(message, on_text)
        return ModelResponse(
            message=message,
            stop_reason=str(finish or "stop"),
            usage=_usage(getattr(completion, "usage", None)),
            model=str(model or self.name),
        )

    async def _streamed(
        self, payload: dict[str, Any], on_text: TextCallback | None
    ) -> ModelResponse:
        stream = await self.client.chat.completions.create(
            **payload, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: Any = None
        finish = "stop"
        model = self.name
        async for chunk in stream:
            model = chunk.model or model
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if on_text is not None:
                        on_text(delta.content)
                for call in delta.tool_calls or ():
                    entry = calls.setdefault(
                        call.index, {"id": "", "function": {"name": "", "arguments": ""}}
                    )
                    entry["id"] = call.id or entry["id"]
                    if call.function is not None:
                        entry["function"]["name"] += call.function.name or ""
                        entry["function"]["arguments"] += call.function.arguments or ""
                finish = choice.finish_reason or finish
        message = {
            "content": "".join(text) or None,
            "tool_calls": [calls[i] for i in sorted(calls)],
        }
        return ModelResponse(
            message=assistant_from_openai(message),
            stop_reason=str(finish),
            usage=_usage(usage),
            model=str(model),
        )


def _malformed(exc: Exception) -> MalformedReply:
    reason = str(exc)
    reason = reason if len(reason) <= 300 else reason[:300] + "…"
    return MalformedReply(f"the model's reply could not be read as a message: {reason}")


def _usage(usage: Any) -> ProviderUsage | None:
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) if details is not None else 0
    # OpenAI's prompt tokens include the cached ones; ctxlab keeps them apart (as Anthropic does).
    try:
        return ProviderUsage.with_cache_inside(
            getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None), cached
        )
    except ValueError as exc:  # a count that is none (negative, NaN, text): the server's fault
        msg = f"the model's reply carries a usage that is no token count: {exc}"
        raise MalformedReply(msg) from exc


def _translate(exc: Exception) -> ModelError:
    import openai

    if isinstance(exc, openai.APIStatusError):
        status, text = exc.status_code, str(exc)
        if status in (400, 413) and any(p in text.lower() for p in _OVERFLOW):
            msg = f"the provider says the request is too long ({status}): {text}"
            return ContextOverflowError(msg, status_code=status)
        if status == 429:
            msg = f"rate-limited by the provider (429): {text}. Wait and retry"
            return RateLimitError(msg, status_code=status)
        if status in (502, 503, 529):
            return OverloadedError(
                f"the provider is overloaded ({status}): {text}", status_code=status
            )
        return ModelError(
            f"the provider rejected the request ({status}): {text}", status_code=status
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach the server: {exc}. Check base_url and that it runs")
    return ModelError(f"the openai SDK failed: {exc}")
