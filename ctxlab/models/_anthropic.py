"""`AnthropicModel`: Claude through the official `anthropic` SDK (async client).

Requests carry prompt-cache breakpoints by default — after the tool schemas and System, and on the
latest message — so a loop that grows its conversation reads the stable prefix from the cache.
Summary requests are the conversation's prefix plus the summary instruction (the base class's
`summarize`), which shares that prefix too. SDK errors become ctxlab's, with the SDK's exception as
their cause; "prompt is too long" becomes `ContextOverflowError`, which the agent recovers from.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Awaitable, Mapping
from typing import Any

from ctxlab.config._config import ContextConfig
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
from ctxlab.messages._usage import count_or_none, token_count
from ctxlab.models._anthropic_edits import (
    applied_edits,
    reported_edits,
    thinking_on,
    with_context_management,
)
from ctxlab.models._anthropic_format import messages_from_anthropic, request_to_anthropic
from ctxlab.models._anthropic_limits import CONTEXT_WINDOWS, context_window_of, needs_streaming
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
from ctxlab.models._provider_call import (
    ProviderCall,
    response_cache,
    sdk_failure,
    without_sdk_retries,
)
from ctxlab.models._response_cache import ResponseCache
from ctxlab.models._retry import RetryPolicy, with_retries

__all__ = ["CONTEXT_WINDOWS", "AnthropicModel"]


_OVERFLOW_PHRASES = ("prompt is too long", "exceeds the context window", "context window")


def _cached(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": {"type": "ephemeral"}}


class AnthropicModel(Model):
    """Claude via the `anthropic` SDK.

    Args:
        model: The model name, e.g. ``"claude-sonnet-4-6"``.
        api_key: The key; ``ANTHROPIC_API_KEY`` when omitted.
        base_url: Another endpoint (a proxy, or a local test server).
        client: An existing ``anthropic.AsyncAnthropic`` (api_key and base_url are then ignored).
        max_tokens: Output tokens per request; reserved in the window when larger than the
            budget policy's output reservation.
        stream: Stream responses (text arrives as ``text_delta`` events). A ``max_tokens`` the
            SDK refuses without streaming (above 21,333) streams whatever this says.
        prompt_cache: Add cache breakpoints (tools + System, latest message).
        context_window: Override the window. Without it the window comes from the Models API
            at the first call (`load_limits`), else from `CONTEXT_WINDOWS`.
        max_retries: Retries of a request that failed for a passing reason (429, 529 and
            other 5xx, 408, 409, no connection), each after the wait the server names
            (``retry-after-ms``, ``retry-after``) or an exponential backoff with jitter; the
            SDK's own retries are turned off, so every wait is known
            (`ModelResponse.retries`). Past the bound: `RetriesExhausted`.
        max_wait: Seconds of waiting between retries, in all, never passed: a wait that would
            pass it gives up at once (`RetriesExhausted`).
        cache: A `ResponseCache` (or a folder for one): a request sent before is answered from
            it, at no cost (`ModelResponse.from_cache`).
        exact_counts: Count every reasoning request with the API's ``count_tokens`` before
            sending it: the count goes on the manifest (``exact_input_tokens``), and a request the
            estimate let through but the exact count finds over the input limit is compacted
            first. One more API call per step.
        context_management: The provider's own context editing: the Messages API's
            ``context_management`` (``{"edits": [...]}``) or a `ContextConfig` whose
            ``provider_edits`` are exported (``config.export("anthropic")``). Sent with every
            request with its beta header; what the API reports it did
            (``context_management.applied_edits``) goes on the manifest of the request as
            ``provider_applied_edit`` transforms. Leave ctxlab's own ``provider_edits`` off
            when the provider applies them, or they are applied twice.
        **parameters: Passed to every request as they are (``temperature``, ``tool_choice``,
            ``thinking``, ``metadata``, and any other keyword of ``messages.create``).
    """

    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        max_tokens: int = 4096,
        stream: bool = False,
        prompt_cache: bool = True,
        context_window: int | None = None,
        max_retries: int = 6,
        max_wait: float = 300.0,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
        exact_counts: bool = False,
        context_management: Mapping[str, Any] | Any = None,
        **parameters: Any,
    ) -> None:
        import anthropic

        if client is None:
            key = api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                msg = (
                    "AnthropicModel needs an API key: set ANTHROPIC_API_KEY or pass api_key=... "
                    "(or use DemoModel, which runs offline)"
                )
                raise UsageError(msg)
            client = sdk_client(
                anthropic.AsyncAnthropic, api_key=key, base_url=base_url, max_retries=0
            )
        checked = checked_client(client, "messages", "anthropic.AsyncAnthropic()")
        self.client = without_sdk_retries(checked)
        self.retry_policy = RetryPolicy(max_retries, max_wait)
        """How failed requests are retried (`RetryPolicy`)."""
        self.cache = response_cache(cache)
        """Where replies are kept and found again (None: every request is sent)."""
        self._sdk_error: type[Exception] = anthropic.AnthropicError
        """The SDK's errors: translated to ctxlab's; anything else propagates as it is."""
        self.name = model
        self.max_tokens = max_tokens
        self.max_output_tokens = max_tokens
        self.stream = stream
        self.exact_counts = exact_counts
        self.prompt_cache = prompt_cache
        self.context_window = context_window or context_window_of(model)
        self.limits_source = "argument" if context_window else "table"
        """Where ``context_window`` comes from: ``argument``, ``table`` or ``models_api``."""
        self._limits_loaded = context_window is not None
        reserved = {"model", "messages", "system", "tools", "max_tokens", "stream"}
        clashing = sorted(reserved & set(parameters))
        if clashing:
            msg = f"{', '.join(clashing)}: set by the pipeline or by AnthropicModel's own arguments"
            raise UsageError(msg)
        if context_management is not None:
            parameters = with_context_management(parameters, context_management)
            # What the server will clear, read as ctxlab's own edits (refused by name when it
            # is not a context_management the API takes): what each request is billed on.
            clearing = [
                e
                for e in parameters["context_management"]["edits"]
                if isinstance(e, Mapping) and e.get("type") != "compact_20260112"
            ]
            read = ContextConfig.from_({"edits": clearing}, "anthropic", model=model)
            self.server_edits = read.provider_edits
            if not thinking_on(parameters) and self.server_edits is not None:
                # No thinking, none to clear (a model's default clearing included).
                self.server_edits = self.server_edits.model_copy(update={"clear_thinking": None})
        self.parameters = parameters
        """Extra keywords of every ``messages.create`` call."""
        # Keywords this SDK's ``create`` does not name travel in the request body as they are.
        named = set(inspect.signature(client.messages.create).parameters)
        self._sdk_keywords = {k: v for k, v in parameters.items() if k in named}
        extra = {k: v for k, v in parameters.items() if k not in named}
        if extra:
            self._sdk_keywords["extra_body"] = {**extra, **parameters.get("extra_body", {})}

    async def load_limits(self) -> None:
        """The context window from the Models API (``max_input_tokens``), once; the table's
        when the API is unreachable or does not say. An explicit ``context_window`` wins."""
        if self._limits_loaded:
            return
        self._limits_loaded = True
        try:
            info = await self.client.models.retrieve(self.name)
        except self._sdk_error:
            return  # offline, a proxy without the route, an unknown alias: the table stands
        window = getattr(info, "max_input_tokens", None)
        if isinstance(window, int) and window > 0:
            self.context_window = window
            self.limits_source = "models_api"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request`` (cache marks included)."""
        checked_call(request, None)
        body = request_to_anthropic(request)
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": body["messages"],
            **self._sdk_keywords,
        }
        if "tools" in body:
            payload["tools"] = body["tools"]
        if "system" in body:
            payload["system"] = [{"type": "text", "text": body["system"]}]
        if self.prompt_cache:
            # Breakpoint 1 covers tools + System (cache order: tools, system, messages);
            # breakpoint 2 the whole conversation so far, read back by the next step.
            if "system" in payload:
                payload["system"][-1] = _cached(payload["system"][-1])
            elif "tools" in payload:
                payload["tools"][-1] = _cached(payload["tools"][-1])
            # ... on the last message the next request will still share: the material after
            # it (usage notice, references) changes from request to request.
            messages = payload["messages"]
            point = len(messages) - 1 - request.material_messages
            if 0 <= point < len(messages):
                marked = dict(messages[point])
                content = marked["content"]
                if isinstance(content, str):
                    content = [{"type": "text", "text": content}]
                # The last block that takes a cache mark (the API refuses one on thinking and
                # on a server's compaction block).
                markable = [
                    n
                    for n, block in enumerate(content)
                    if block.get("type") not in ("thinking", "redacted_thinking", "compaction")
                ]
                if markable:
                    n = markable[-1]
                    content = [*content[:n], _cached(content[n]), *content[n + 1 :]]
                marked["content"] = content
                messages[point] = marked
        return payload

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        body = {"max_tokens": self.max_tokens, **self.payload(request)}
        streaming = self.stream or needs_streaming(self.name, self.max_tokens)
        streamed = [False]  # text handed to on_text: a failure after it is not retried

        async def send() -> ModelResponse:
            if streaming:
                async with self.client.messages.stream(**body) as stream:
                    texts = stream.text_stream.__aiter__()
                    while (text := await _next_or_none(texts)) is not None:
                        streamed[0] = True
                        if on_text is not None:
                            on_text(text)  # (the caller's: its errors are its own)
                    message = await _sdk_read(stream.get_final_message())
            else:
                message = await _sdk_read(self.client.messages.create(**body))
            return _response(message)

        import anthropic

        call = ProviderCall(
            "anthropic.messages",
            str(getattr(self.client, "base_url", "")),
            body,
            send,
            lambda exc: sdk_failure(exc, anthropic, streamed[0]),
            _translate,
        )
        response = await call.run(self.retry_policy, self.cache)
        if response.from_cache or not streaming:
            emit_text(response.message, on_text)  # (the caller's: its errors are its own)
        return response

    async def count_tokens(self, request: ModelRequest) -> int:
        """The exact input tokens of ``request``, counted by the API (``count_tokens``)."""
        accepted = inspect.signature(self.client.messages.count_tokens).parameters
        payload = {k: v for k, v in self.payload(request).items() if k in accepted}
        import anthropic

        result, _ = await with_retries(
            self.retry_policy,
            lambda: self.client.messages.count_tokens(**payload),
            lambda exc: sdk_failure(exc, anthropic),
            _translate,
        )
        # With context_management in force the API counts the request after its edits and
        # reports the request as sent in ``original_input_tokens``: that is what ctxlab built
        # and estimated, so it is what the exact count compares.
        managed = getattr(result, "context_management", None)
        original = (
            managed.get("original_input_tokens")
            if isinstance(managed, Mapping)
            else getattr(managed, "original_input_tokens", None)
        )
        counted = count_or_none(original if isinstance(original, int) else result.input_tokens)
        if counted is None:
            msg = f"the API counted {result.input_tokens!r} tokens: not a token count"
            raise MalformedReply(msg)
        return counted


async def _next_or_none(texts: Any) -> str | None:
    try:
        text: str = await _sdk_read(texts.__anext__())
    except StopAsyncIteration:
        return None
    return text


async def _sdk_read(step: Awaitable[Any]) -> Any:
    """What the SDK's stream reads next: an event it cannot accumulate — a tool input too
    deep to parse, a block of a shape it does not know, an event out of order — fails it with
    an error of Python's own (ValueError, AttributeError, ...), said here as a MalformedReply."""
    try:
        return await step
    except StopAsyncIteration:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RuntimeError) as exc:
        raise _malformed(exc) from exc
    except AssertionError as exc:  # the SDK's own check: a stream that carried no message
        raise _malformed(exc, "the stream carried no message") from exc


def _response(message: Any) -> ModelResponse:
    try:
        # A block type this SDK does not model (a server compaction block, say) is built as
        # the union's first member with the block's own fields: the dump writes the fields as
        # they came, and pydantic's warning about the mismatch is no news.
        if not hasattr(message, "model_dump"):  # a body that is no message (text, a list)
            msg = f"the body is {type(message).__name__}, not a message"
            raise ValueError(msg)
        data = message.model_dump(mode="json", exclude_none=True, warnings=False)
        # Every block is kept: thinking must go back signed and unmodified with the tool
        # results that follow it, and server tool blocks are part of what the model said.
        content = data.get("content") or ""
        parsed = messages_from_anthropic([{"role": "assistant", "content": content}])[0]
    except (ValueError, RecursionError) as exc:  # pydantic's errors are ValueErrors
        raise _malformed(exc) from exc
    # The usage as the SDK holds it: dumped as JSON, a NaN count would read as a missing one.
    sdk_usage: Any = getattr(message, "usage", None)
    usage = (
        sdk_usage.model_dump(warnings=False)
        if hasattr(sdk_usage, "model_dump")
        else data.get("usage")
    )
    usage = usage if isinstance(usage, Mapping) else {}
    try:
        # Each count checked (`ProviderUsage`): a negative, NaN or textual one is no bill.
        billed = _billed(usage)
        _check_iterations(usage.get("iterations"))
    except ValueError as exc:
        raise _malformed(exc, "its usage is no token count") from exc
    return ModelResponse(
        message=parsed,  # type: ignore[arg-type]
        stop_reason=data.get("stop_reason") or "end_turn",
        usage=billed,
        model=data.get("model", ""),
        provider_transforms=applied_edits(data),
        applied_edits=reported_edits(data),
    )


_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""The counts of a usage, and of each of its ``iterations``."""


def _billed(usage: Mapping[str, Any]) -> ProviderUsage:
    """The four counts of ``usage`` and, of the cache writes, those made with the 1-hour time
    to live: ``cache_creation.ephemeral_1h_input_tokens`` (anthropic 2.17 ``types/usage.py``,
    ``CacheCreation``), priced twice the base input where the 5-minute writes are 1.25 times.
    `ValueError` for a count that is none, or 1-hour writes above all the writes."""
    counts = [token_count(usage.get(name), name) for name in _COUNTS]
    billed = ProviderUsage(*counts)
    split = usage.get("cache_creation")
    if split is None:
        return billed
    if not isinstance(split, Mapping):
        msg = f"usage field 'cache_creation' is {type(split).__name__}, not the TTL split"
        raise ValueError(msg)
    # Both checked; the 5-minute writes are the rest of the writes.
    checked = {
        name: token_count(0 if split.get(name) is None else split[name], f"cache_creation.{name}")
        for name in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
    }
    hour = checked["ephemeral_1h_input_tokens"]
    if hour > billed.cache_creation_input_tokens:
        msg = (
            f"1-hour cache writes {hour:,} exceed the cache writes "
            f"{billed.cache_creation_input_tokens:,}"
        )
        raise ValueError(msg)
    return dataclasses.replace(billed, cache_creation_1h_input_tokens=hour)


def _check_iterations(iterations: Any) -> None:
    """`ValueError` for ``usage.iterations`` (a list of sampling and compaction calls, each with
    the four counts: anthropic 2.14.0, ``beta_iterations_usage.py``) that is no such list: a
    compaction call is billed from it, beside the request."""
    if iterations is None:
        return
    if not isinstance(iterations, list):
        msg = f"usage field 'iterations' is {type(iterations).__name__}, not a list of calls"
        raise ValueError(msg)
    for number, step in enumerate(iterations):
        if not isinstance(step, Mapping):
            msg = f"usage field 'iterations[{number}]' is {type(step).__name__}, not a call"
            raise ValueError(msg)
        for name in _COUNTS:
            token_count(step.get(name), f"iterations[{number}].{name}")


def _malformed(exc: Exception, what: str = "") -> MalformedReply:
    reason = str(exc)
    # The SDK quotes the whole unreadable JSON: the start says enough.
    reason = reason if len(reason) <= 300 else reason[:300] + "…"
    said = f" ({what})" if what else ""
    return MalformedReply(f"the model's reply could not be read as a message{said}: {reason}")


def _translate(exc: Exception) -> ModelError:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        text = str(exc)
        if status in (400, 413) and any(p in text.lower() for p in _OVERFLOW_PHRASES):
            return ContextOverflowError(
                f"the provider says the request is too long ({status}): {text}",
                status_code=status,
            )
        if status == 429:
            return RateLimitError(
                f"rate-limited by the provider (429): {text}. Wait and retry, or lower the "
                "request rate",
                status_code=status,
            )
        if status in (503, 529):
            return OverloadedError(
                f"the provider is overloaded ({status}): {text}. Retry later",
                status_code=status,
            )
        return ModelError(
            f"the provider rejected the request ({status}): {text}", status_code=status
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelError(f"cannot reach the Anthropic API: {exc}. Check the network or base_url")
    return ModelError(f"the anthropic SDK failed: {exc}")
