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
from collections.abc import Awaitable, Callable
from typing import Any

from ctxlab.exceptions import (
    ContextOverflowError,
    CtxlabError,
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
from ctxlab.models._openai_usage import chat_usage
from ctxlab.models._provider_call import (
    ProviderCall,
    response_cache,
    sdk_failure,
    without_sdk_retries,
)
from ctxlab.models._response_cache import ResponseCache
from ctxlab.models._retry import RetryPolicy

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
        max_retries: Retries of a request that failed for a passing reason (429, 5xx, 408,
            409, no connection), each after the wait the server names (``retry-after-ms``,
            ``retry-after``) or an exponential backoff with jitter; the SDK's own retries are
            turned off, so every wait is known (`ModelResponse.retries`). Past the bound:
            `RetriesExhausted`.
        max_wait: Seconds of waiting between retries, in all, never passed.
        cache: A `ResponseCache` (or a folder for one): a request sent before is answered from
            it, at no cost (`ModelResponse.from_cache`).
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
        max_retries: int = 6,
        max_wait: float = 300.0,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
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
            client = sdk_client(openai.AsyncOpenAI, api_key=key, base_url=base_url, max_retries=0)
        self.client = without_sdk_retries(checked_client(client, "chat", "openai.AsyncOpenAI()"))
        self.retry_policy = RetryPolicy(max_retries, max_wait)
        """How failed requests are retried (`RetryPolicy`)."""
        self.cache = response_cache(cache)
        """Where replies are kept and found again (None: every request is sent)."""
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
        streamed = [False]  # text handed to on_text: a failure after it is not retried

        async def send() -> ModelResponse:
            if self.stream:
                return await self._streamed(payload, on_text, streamed)
            return self._read(await self.client.chat.completions.create(**payload))

        import openai

        call = ProviderCall(
            "openai.chat",
            str(getattr(self.client, "base_url", "")),
            payload,
            _malformed_on_python_errors(send),
            lambda exc: sdk_failure(exc, openai, streamed[0]),
            _translate,
        )
        response = await call.run(self.retry_policy, self.cache)
        if response.from_cache or not self.stream:
            emit_text(response.message, on_text)  # (the caller's: its errors are its own)
        return response

    def _read(self, completion: Any) -> ModelResponse:
        try:
            choice = completion.choices[0]
            reply, finish = choice.message, choice.finish_reason
            model = completion.model
        except (TypeError, AttributeError, KeyError, IndexError) as exc:
            raise _malformed(exc) from exc
        return ModelResponse(
            message=assistant_from_openai(reply),
            stop_reason=str(finish or "stop"),
            usage=_usage(getattr(completion, "usage", None)),
            model=str(model or self.name),
        )

    async def _streamed(
        self, payload: dict[str, Any], on_text: TextCallback | None, streamed: list[bool]
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
                    streamed[0] = True
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


def _malformed_on_python_errors(
    send: Callable[[], Awaitable[ModelResponse]],
) -> Callable[[], Awaitable[ModelResponse]]:
    """``send``, with the errors of Python's own that the SDK lets out on a body it cannot read
    (not JSON, not UTF-8, no choices: json's, the codec's) said as a `MalformedReply`."""

    async def guarded() -> ModelResponse:
        try:
            return await send()
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            if isinstance(exc, CtxlabError):
                raise
            raise _malformed(exc) from exc

    return guarded


def _malformed(exc: Exception) -> MalformedReply:
    reason = str(exc)
    reason = reason if len(reason) <= 300 else reason[:300] + "…"
    return MalformedReply(f"the model's reply could not be read as a message: {reason}")


def _usage(usage: Any) -> ProviderUsage | None:
    try:
        return chat_usage(usage)
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
