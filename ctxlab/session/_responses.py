"""`logged_responses`: what the session log kept of each model response, read back typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlab.messages import ProviderUsage
from ctxlab.models._retry import RetryWait
from ctxlab.session._records import SessionKey

if TYPE_CHECKING:
    from ctxlab.session._log import SessionLog

__all__ = ["LoggedResponse", "logged_responses"]


@dataclass(frozen=True)
class LoggedResponse:
    """A model response as the log kept it (`ctxlab.events.ModelResponseEvent` less its
    message, which the log keeps with the turn's messages)."""

    request_id: str
    """The request it answered (its manifest's ``request_id``)."""
    stop_reason: str
    """Why the model stopped."""
    usage: ProviderUsage | None
    """What the provider reported (None: nothing)."""
    from_cache: bool = False
    """Whether the reply came from a response cache, not the provider."""
    retries: tuple[RetryWait, ...] = ()
    """The retries it took, each with its wait."""


def logged_responses(log: SessionLog, key: SessionKey) -> list[LoggedResponse]:
    """The session's model responses, in order. A log written before ``from_cache`` and
    ``retries`` were kept reads as no cache and no retries."""
    log._require(key)
    return [_response(p) for _, p in log.event_payloads(key, ("model_response",))]


def _response(payload: Mapping[str, Any]) -> LoggedResponse:
    usage = payload.get("usage")
    return LoggedResponse(
        request_id=str(payload.get("request_id") or payload.get("call_id") or ""),
        stop_reason=str(payload.get("stop") or ""),
        usage=ProviderUsage(**usage) if isinstance(usage, dict) else None,
        from_cache=bool(payload.get("from_cache", False)),
        retries=tuple(RetryWait(**r) for r in payload.get("retries") or ()),
    )
