"""`AnthropicModel`: Claude through the official `anthropic` SDK (async client).

Requests carry prompt-cache breakpoints by default — after the tool schemas and System, and on the
latest message — so a loop that grows its conversation reads the stable prefix from the cache.
Summary requests are the conversation's prefix plus the summary instruction (the base class's
`summarize`), which shares that prefix too. SDK errors become ctxlab's, with the SDK's exception as
their cause; "prompt is too long" becomes `ContextOverflowError`, which the agent recovers from.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import (
    ContextOverflowError,
    MalformedReply,
    ModelError,
    OverloadedError,
    RateLimitError,
    UsageError,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._usage import count_or_none
from ctxlab.models._anthropic_edits import (
    thinking_on,
    with_context_management,
)
from ctxlab.models._anthropic_format import request_to_anthropic
from ctxlab.models._anthropic_limits import CONTEXT_WINDOWS, context_window_of, needs_streaming
from ctxlab.models._anthropic_reply import next_text, reply_response, sdk_read
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

if TYPE_CHECKING:
    from ctxlab.config._sections import ProviderEdits

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
            client = _client(api_key, base_url)
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
            self.server_edits = _server_edits(parameters, model)
        self.parameters = parameters
        """Extra keywords of every ``messages.create`` call."""
        self._sdk_keywords = _sdk_keywords(client, parameters)

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
                    while (text := await next_text(texts)) is not None:
                        streamed[0] = True
                        if on_text is not None:
                            on_text(text)  # (the caller's: its errors are its own)
                    message = await sdk_read(stream.get_final_message())
            else:
                message = await sdk_read(self.client.messages.create(**body))
            return reply_response(message)

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


def _client(api_key: str | None, base_url: str | None) -> Any:
    """An ``anthropic.AsyncAnthropic`` with no retries of its own (ctxlab retries)."""
    import anthropic

    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        msg = (
            "AnthropicModel needs an API key: set ANTHROPIC_API_KEY or pass api_key=... "
            "(or use DemoModel, which runs offline)"
        )
        raise UsageError(msg)
    return sdk_client(anthropic.AsyncAnthropic, api_key=key, base_url=base_url, max_retries=0)


def _server_edits(parameters: Mapping[str, Any], model: str) -> ProviderEdits | None:
    """What the server will clear, read as ctxlab's own edits (refused by name when it is not a
    context_management the API takes): what each request is billed on."""
    clearing = [
        e
        for e in parameters["context_management"]["edits"]
        if isinstance(e, Mapping) and e.get("type") != "compact_20260112"
    ]
    edits = ContextConfig.from_({"edits": clearing}, "anthropic", model=model).provider_edits
    if not thinking_on(parameters) and edits is not None:
        # No thinking, none to clear (a model's default clearing included).
        edits = edits.model_copy(update={"clear_thinking": None})
    return edits


def _sdk_keywords(client: Any, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``parameters`` as ``messages.create`` keywords: those this SDK's ``create`` does not name
    travel in the request body as they are (``extra_body``)."""
    named = set(inspect.signature(client.messages.create).parameters)
    keywords = {k: v for k, v in parameters.items() if k in named}
    extra = {k: v for k, v in parameters.items() if k not in named}
    if extra:
        keywords["extra_body"] = {**extra, **parameters.get("extra_body", {})}
    return keywords
