"""Retries of a provider request that failed for a passing reason, bounded in count and in time.

The provider adapters own their retries (their SDK client is made with ``max_retries=0``), so
that `AnthropicModel` and `OpenAIModel` behave alike and every wait is known: each one goes on
the response (`ModelResponse.retries`), or on the error when the bound is passed.

What is retried is what both SDKs retry (anthropic 2.17 and openai 3.63,
``_base_client.py`` ``_should_retry``): HTTP 408, 409, 429 and every 5xx (Anthropic's 529
"overloaded" among them), and a request that never got an answer (a refused connection, a
timeout); a server's ``x-should-retry: true`` or ``false`` overrides the status. How long to
wait is what the server says — ``retry-after-ms`` (milliseconds), else ``retry-after``
(seconds, or an HTTP date) — else an exponential backoff with jitter. Unlike the SDKs, a
server's wait is never shortened or skipped: when it would take the total past ``max_wait``,
the error is raised at once instead of retrying early into the same refusal.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from ctxlab.exceptions import ModelError, RetriesExhausted, UsageError
from ctxlab.util._checks import shown

__all__ = [
    "Failure",
    "RetryPolicy",
    "RetryWait",
    "backoff_seconds",
    "server_wait",
    "should_retry",
    "with_retries",
]

T = TypeVar("T")

_RETRIED = frozenset({408, 409, 429})
"""Statuses below 500 that are worth another try (timeout, lock, rate limit)."""
_FIRST_BACKOFF = 1.0
"""Seconds before the first retry when the server does not say."""
_LONGEST_BACKOFF = 60.0
"""The longest single wait of the backoff (a server's own wait may be longer)."""


@dataclass(frozen=True)
class RetryWait:
    """One retry: why the request was tried again and how long it waited first."""

    attempt: int
    """The try that failed (1 for the first request)."""
    status_code: int | None
    """The HTTP status it failed with; None when no answer came (connection, timeout)."""
    seconds: float
    """How long the retry waited."""
    source: Literal["retry-after-ms", "retry-after", "backoff"]
    """Where the wait came from: the server's header, or ctxlab's exponential backoff."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider adapter retries: at most ``max_retries`` retries and ``max_wait`` seconds
    of waiting in all. ``sleep``, ``now`` and ``jitter`` are the clock and the dice (a test
    gives its own: ``dataclasses.replace(model.retry_policy, sleep=...)``)."""

    max_retries: int = 6
    """Retries after the first try (0: none; the first error is raised as it is)."""
    max_wait: float = 300.0
    """Seconds of waiting, summed over the retries, never passed."""
    sleep: Callable[[float], Awaitable[Any]] | None = field(default=None, repr=False)
    """How a wait is waited (None: `asyncio.sleep`)."""
    now: Callable[[], float] | None = field(default=None, repr=False)
    """The wall clock, for a ``retry-after`` given as an HTTP date (None: `time.time`)."""
    jitter: Callable[[], float] | None = field(default=None, repr=False)
    """A number in [0, 1) by which the backoff is shortened by up to a quarter of itself
    (None: `random.random`)."""

    def __post_init__(self) -> None:
        if type(self.max_retries) is not int or not 0 <= self.max_retries <= 1000:
            msg = (
                f"max_retries must be a whole number from 0 to 1000, got {shown(self.max_retries)}"
            )
            raise UsageError(msg)
        wait = self.max_wait
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < math.inf:
            msg = f"max_wait must be a number of seconds, 0 or more, got {shown(wait)}"
            raise UsageError(msg)
        for name in ("sleep", "now", "jitter"):
            given = getattr(self, name)
            if given is not None and not callable(given):
                msg = f"{name} must be a function (or None), got {shown(given)}"
                raise UsageError(msg)

    async def _wait(self, seconds: float) -> None:
        """Wait ``seconds`` (with ``sleep``)."""
        await (self.sleep or asyncio.sleep)(seconds)

    def _clock(self) -> float:
        """The wall clock's time now (``now``)."""
        return (self.now or time.time)()

    def _dice(self) -> float:
        """A number in [0, 1) (``jitter``)."""
        return (self.jitter or random.random)()


def backoff_seconds(attempt: int, jitter: float) -> float:
    """The wait after failed try ``attempt`` (1, 2, ...) when the server names none: 1 s,
    doubling, at most 60 s, less up to a quarter by ``jitter`` (so that clients refused
    together do not come back together)."""
    base = min(_FIRST_BACKOFF * 2.0 ** min(attempt - 1, 64), _LONGEST_BACKOFF)
    return base * (1 - 0.25 * jitter)


def server_wait(
    headers: Mapping[str, str] | None, now: float
) -> tuple[float, Literal["retry-after-ms", "retry-after"]] | None:
    """The wait a server asks for in ``headers`` (names in lower case), and its header:
    ``retry-after-ms`` first (more precise), then ``retry-after`` in seconds or as an HTTP date
    (relative to ``now``, never below 0). None when neither says a number of seconds (absent,
    text, negative, NaN); an infinite wait is returned as it is, for the caller to refuse."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        seconds = _number(headers.get(name))
        if seconds is not None:
            return seconds / scale, name  # type: ignore[return-value]
    date = headers.get("retry-after")
    try:
        parsed = email.utils.parsedate_tz(date) if isinstance(date, str) else None
        when = email.utils.mktime_tz(parsed) if parsed is not None else None
    except (TypeError, ValueError, OverflowError):
        when = None
    return None if when is None else (max(when - now, 0.0), "retry-after")


def _number(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if seconds >= 0 else None  # NaN compares false: no number


def should_retry(status: int | None, headers: Mapping[str, str] | None) -> bool:
    """Whether a failure with HTTP ``status`` (None: no answer) is worth another try."""
    said = (headers or {}).get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return status is None or status in _RETRIED or status >= 500


@dataclass(frozen=True)
class Failure:
    """What a failed try tells the retry loop (an adapter reads it from its SDK's error)."""

    status_code: int | None
    headers: Mapping[str, str] | None
    retryable: bool


def next_wait(
    policy: RetryPolicy, failure: Failure, attempt: int, waited: float
) -> RetryWait | str:
    """The wait before retrying failed try ``attempt`` after ``waited`` seconds of waits, or
    why there is none (a reason to give up, in words)."""
    if not failure.retryable:
        return "not a passing failure"
    if attempt > policy.max_retries:
        return f"max_retries={policy.max_retries} retries made"
    asked = server_wait(failure.headers, policy._clock())
    source: Literal["retry-after-ms", "retry-after", "backoff"]
    if asked is not None:
        seconds, source = asked
    else:
        seconds, source = backoff_seconds(attempt, policy._dice()), "backoff"
    if waited + seconds > policy.max_wait:
        return (
            f"the next wait ({_seconds(seconds)}, from {source}) would pass "
            f"max_wait={_seconds(policy.max_wait)} after {_seconds(waited)} waited"
        )
    return RetryWait(attempt, failure.status_code, seconds, source)


def _seconds(value: float) -> str:
    return "no end" if value == math.inf else f"{value:.3g} s"


def waits_text(waits: tuple[RetryWait, ...]) -> str:
    """The waits made, in words: ``2 retries, waited 1 s (retry-after) + 2 s (backoff)``."""
    if not waits:
        return "no retry"
    each = " + ".join(f"{_seconds(w.seconds)} ({w.source})" for w in waits)
    return f"{len(waits)} retr{'y' if len(waits) == 1 else 'ies'}, waited {each}"


async def with_retries(
    policy: RetryPolicy,
    call: Callable[[], Awaitable[T]],
    failure_of: Callable[[Exception], Failure | None],
    translate: Callable[[Exception], ModelError],
) -> tuple[T, tuple[RetryWait, ...]]:
    """``call()``'s result and the retries it took. A failure ``failure_of`` does not know (None:
    not the SDK's) propagates as it is; the SDK's become ctxlab's by ``translate``, carrying
    the waits made (`ModelError.retries`) — `RetriesExhausted` when a passing failure outlasts
    the policy's bounds (a wait the server asks for that alone passes ``max_wait`` included)
    while retries are on."""
    waits: list[RetryWait] = []
    waited = 0.0
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call(), tuple(waits)
        except Exception as exc:
            failure = failure_of(exc)
            if failure is None:
                raise
            decision = next_wait(policy, failure, attempt, waited)
            if isinstance(decision, str):
                given = _given_up(translate(exc), exc, tuple(waits), policy, failure, decision)
                raise given from (given.__cause__ or exc)
        waits.append(decision)
        waited += decision.seconds
        await policy._wait(decision.seconds)


def _given_up(
    error: ModelError,
    cause: Exception,
    waits: tuple[RetryWait, ...],
    policy: RetryPolicy,
    failure: Failure,
    reason: str,
) -> ModelError:
    error.retries = waits
    if not failure.retryable or policy.max_retries == 0:
        return error  # not one to retry, or retries off: the error as it is (from the SDK's)  # nothing was retried, or the last failure is not one to retry
    status = f"HTTP {failure.status_code}" if failure.status_code else "no answer"
    msg = (
        f"the provider still failed ({status}) after {waits_text(waits)}; {reason}. Wait and "
        f"run again, lower the request rate, or raise max_retries= / max_wait= "
        f"(last error: {error})"
    )
    exhausted = RetriesExhausted(msg, status_code=failure.status_code, retries=waits)
    exhausted.__cause__ = error
    error.__cause__ = cause
    return exhausted
