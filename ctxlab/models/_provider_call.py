"""What every provider adapter does around its SDK call: the response cache first, then the
call with ctxlab's retries (`ctxlab.models._retry`), then the reply kept in the cache."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ctxlab.exceptions import ModelError, UsageError
from ctxlab.models._base import ModelResponse
from ctxlab.models._response_cache import ResponseCache
from ctxlab.models._retry import Failure, RetryPolicy, should_retry, with_retries
from ctxlab.util._checks import shown

__all__ = ["ProviderCall", "response_cache", "sdk_failure", "without_sdk_retries"]


def response_cache(cache: object) -> ResponseCache | None:
    """A model's ``cache=`` argument as a `ResponseCache`: one as it is, a folder made one."""
    if cache is None or isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, str | os.PathLike):
        return ResponseCache(cache)
    msg = f"cache must be a ResponseCache or a folder, got {shown(cache)}"
    raise UsageError(msg)


def without_sdk_retries(client: Any) -> Any:
    """``client`` with its SDK's own retries off (``with_options(max_retries=0)``): the model
    retries itself, the same way for every provider, and records each wait. A client that has
    no ``with_options`` (not the SDK's) is used as it is."""
    copy = getattr(client, "with_options", None)
    if not callable(copy):
        return client
    try:
        return copy(max_retries=0)
    except Exception:  # a stand-in with another with_options: it keeps its own ways
        return client


def sdk_failure(exc: Exception, sdk: Any, streamed: bool = False) -> Failure | None:
    """What a failed SDK call tells the retry loop (``sdk``: the ``anthropic`` or ``openai``
    module, whose error classes share their names); None for an error not the SDK's. A call
    that has ``streamed`` text already is not tried again: the text was shown."""
    if not isinstance(exc, _base_error(sdk)):
        return None
    if streamed:
        return Failure(getattr(exc, "status_code", None), None, retryable=False)
    if isinstance(exc, sdk.APIStatusError):
        response = getattr(exc, "response", None)
        raw = getattr(response, "headers", None)
        headers = {str(k).lower(): str(v) for k, v in raw.items()} if raw is not None else {}
        return Failure(exc.status_code, headers, should_retry(exc.status_code, headers))
    if isinstance(exc, sdk.APIConnectionError):  # no answer came (refused, timed out)
        return Failure(None, None, should_retry(None, None))
    return Failure(None, None, retryable=False)


def _base_error(sdk: Any) -> type[Exception]:
    base: type[Exception] = getattr(sdk, "AnthropicError", None) or sdk.OpenAIError
    return base


@dataclasses.dataclass(frozen=True)
class ProviderCall:
    """One provider request as its adapter sends it: the API spoken, the server, the body (the
    SDK call's keywords: what the cache keys on), and the pieces that send it and read its
    errors."""

    api: str
    base_url: str
    body: Mapping[str, Any]
    send: Callable[[], Awaitable[ModelResponse]]
    failure_of: Callable[[Exception], Failure | None]
    translate: Callable[[Exception], ModelError]

    async def run(self, policy: RetryPolicy, cache: ResponseCache | None) -> ModelResponse:
        """The reply: from ``cache`` when it holds this request (``from_cache`` set: its text
        is for the adapter to hand on, as no stream brought it), else sent with ``policy``'s
        retries and kept in ``cache``."""
        key = cache.key(self.api, self.base_url, self.body) if cache is not None else ""
        if cache is not None:
            hit = cache.get(key)
            if hit is not None:
                return hit
        response, waits = await with_retries(policy, self.send, self.failure_of, self.translate)
        if waits:
            response = dataclasses.replace(response, retries=waits)
        if cache is not None:
            cache.put(key, dataclasses.replace(response, retries=()))
        return response
