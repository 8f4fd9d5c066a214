"""Rate limits and overloaded servers: both adapters retry as the server says, bounded, through
their real SDKs against local servers, and every wait is known (a fake clock takes them)."""

from __future__ import annotations

import email.utils
from typing import Any

import pytest

pytest.importorskip("openai")

from ctxlab.exceptions import ModelError, OverloadedError, RateLimitError, RetriesExhausted
from ctxlab.models import RetryPolicy, RetryWait
from ctxlab.models._retry import backoff_seconds, server_wait
from tests.models._local_server import with_headers
from tests.models._providers import PROVIDERS, FakeClock, Provider, ask

each_provider = pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)


@each_provider
@pytest.mark.parametrize("stream", [False, True])
async def test_a_429_with_retry_after_is_retried_once_after_its_wait(
    provider: Provider, stream: bool
) -> None:
    clock = FakeClock()
    script = [with_headers(provider.error(429), retry_after="1"), provider.reply("Five.")]
    with provider.server(script) as api:
        model = provider.model(api, clock, stream=stream)
        response = await model.request(ask())
    assert len(api.requests) == 2
    assert clock.waits == [1.0]
    assert response.retries == (RetryWait(1, 429, 1.0, "retry-after"),)
    assert response.message.content[0].text == "Five."


@each_provider
async def test_retry_after_ms_wins_and_an_http_date_is_read_against_the_clock(
    provider: Provider,
) -> None:
    clock = FakeClock()
    date = email.utils.formatdate(clock.time + 42, usegmt=True)
    script = [
        with_headers(provider.error(529), retry_after_ms="1500", retry_after="9"),
        with_headers(provider.error(503), retry_after=date),
        provider.reply("ok"),
    ]
    with provider.server(script) as api:
        response = await provider.model(api, clock).request(ask())
    # The date is 42 s after the clock at the first failure; 1.5 s have passed since.
    assert clock.waits == [1.5, 40.5]
    assert [(w.status_code, w.source) for w in response.retries] == [
        (529, "retry-after-ms"),
        (503, "retry-after"),
    ]


@each_provider
async def test_without_a_header_the_backoff_doubles(provider: Provider) -> None:
    clock = FakeClock()
    script = [provider.error(529), provider.error(500), provider.error(429), provider.reply("x")]
    with provider.server(script) as api:
        response = await provider.model(api, clock, jitter=0.0).request(ask())
    assert clock.waits == [1.0, 2.0, 4.0]
    assert {w.source for w in response.retries} == {"backoff"}
    assert len(api.requests) == 4


@each_provider
async def test_past_max_retries_the_error_names_the_status_and_the_waits(
    provider: Provider,
) -> None:
    clock = FakeClock()
    script = [with_headers(provider.error(429), retry_after="2")] * 3
    with provider.server(script) as api:
        model = provider.model(api, clock, max_retries=2)
        with pytest.raises(RetriesExhausted) as raised:
            await model.request(ask())
    assert len(api.requests) == 3  # the first try and two retries
    assert clock.waits == [2.0, 2.0]
    error = raised.value
    assert error.status_code == 429
    assert [w.seconds for w in error.retries] == [2.0, 2.0]
    assert "HTTP 429" in str(error) and "2 retries, waited 2 s (retry-after) + 2 s" in str(error)
    assert "max_retries=2" in str(error)
    assert isinstance(error.__cause__, RateLimitError)


@each_provider
async def test_a_wait_past_max_wait_gives_up_at_once(provider: Provider) -> None:
    clock = FakeClock()
    script = [with_headers(provider.error(529), retry_after="10"), provider.reply("late")]
    with provider.server(script) as api, pytest.raises(RetriesExhausted) as raised:
        await provider.model(api, clock, max_wait=5).request(ask())
    assert clock.waits == []
    assert len(api.requests) == 1
    assert "would pass max_wait=5 s" in str(raised.value)
    assert isinstance(raised.value.__cause__, OverloadedError)


@each_provider
async def test_the_total_wait_is_bounded(provider: Provider) -> None:
    clock = FakeClock()
    script = [with_headers(provider.error(429), retry_after="4")] * 5
    with provider.server(script) as api, pytest.raises(RetriesExhausted):
        await provider.model(api, clock, max_wait=10).request(ask())
    assert clock.waits == [4.0, 4.0]  # a third wait would make 12 s
    assert len(api.requests) == 3


@each_provider
@pytest.mark.parametrize(
    ("answer", "headers"), [(400, {}), (429, {"x_should_retry": "false"})], ids=["400", "told"]
)
async def test_what_is_not_passing_is_not_retried(
    provider: Provider, answer: int, headers: dict[str, str]
) -> None:
    clock = FakeClock()
    script = [with_headers(provider.error(answer), **headers)]
    with provider.server(script) as api, pytest.raises(ModelError) as raised:
        await provider.model(api, clock).request(ask())
    assert not isinstance(raised.value, RetriesExhausted)
    assert raised.value.status_code == answer
    assert len(api.requests) == 1 and clock.waits == []


@each_provider
async def test_max_retries_0_raises_the_first_error_as_it_is(provider: Provider) -> None:
    script = [with_headers(provider.error(429), retry_after="1")]
    with provider.server(script) as api, pytest.raises(RateLimitError):
        await provider.model(api, FakeClock(), max_retries=0).request(ask())
    assert len(api.requests) == 1


@each_provider
async def test_a_server_that_never_answers_is_retried_then_given_up(provider: Provider) -> None:
    with provider.server() as api:
        url = api.url
    gone: Any = type("Gone", (), {"url": url})()  # the port is closed now
    clock = FakeClock()
    with pytest.raises(RetriesExhausted) as raised:
        await provider.model(gone, clock, max_retries=2, jitter=0.0).request(ask())
    assert clock.waits == [1.0, 2.0]
    assert raised.value.status_code is None and "no answer" in str(raised.value)


def test_the_header_forms() -> None:
    assert server_wait({"retry-after": "3"}, 0) == (3.0, "retry-after")
    assert server_wait({"retry-after-ms": "250"}, 0) == (0.25, "retry-after-ms")
    assert server_wait({"retry-after-ms": "soon", "retry-after": "2.5"}, 0) == (2.5, "retry-after")
    assert server_wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1445412470) == (
        10.0,
        "retry-after",
    )
    # A date already passed is no wait; text, a negative or a NaN says nothing.
    assert server_wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1445412490)[0] == 0.0  # type: ignore[index]
    for said in ("soon", "-1", "nan", ""):
        assert server_wait({"retry-after": said}, 0) is None
    assert server_wait(None, 0) is None


def test_the_backoff_is_bounded_and_jittered_down() -> None:
    assert [backoff_seconds(n, 0.0) for n in (1, 2, 3, 7, 8, 500)] == [1, 2, 4, 60, 60, 60]
    assert backoff_seconds(3, 0.999) == pytest.approx(4 * 0.75025)


@pytest.mark.parametrize(
    "arguments",
    [{"max_retries": -1}, {"max_retries": 1.5}, {"max_wait": -2}, {"max_wait": float("nan")}],
)
def test_a_policy_out_of_bounds_is_refused(arguments: dict[str, Any]) -> None:
    from ctxlab.exceptions import UsageError

    with pytest.raises(UsageError, match="max_"):
        RetryPolicy(**arguments)
