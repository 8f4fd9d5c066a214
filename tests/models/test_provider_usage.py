"""Both adapters read the usage the provider reports, whole and to the token: Anthropic's split
of cache writes by time to live, the cache reads and writes of OpenAI-compatible servers."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("openai")

from ctxlab.exceptions import MalformedReply
from ctxlab.messages import ProviderUsage
from tests.models._providers import PROVIDERS, ask
from tests.models.chat_api import completion
from tests.models.messages_api import message

ANTHROPIC, OPENAI = PROVIDERS


def _with_split(five: Any, hour: Any, total: int) -> dict[str, Any]:
    body = message("Cached.", input_tokens=7, output_tokens=11, cache_read_input_tokens=900)
    body["usage"]["cache_creation_input_tokens"] = total
    body["usage"]["cache_creation"] = {
        "ephemeral_5m_input_tokens": five,
        "ephemeral_1h_input_tokens": hour,
    }
    return body


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_cache_writes_split_by_time_to_live(stream: bool) -> None:
    with ANTHROPIC.server([_with_split(300, 1200, 1500)]) as api:
        response = await ANTHROPIC.model(api, stream=stream).request(ask())
    assert response.usage == ProviderUsage(
        input_tokens=7,
        output_tokens=11,
        cache_read_input_tokens=900,
        cache_creation_input_tokens=1500,
        cache_creation_1h_input_tokens=1200,
    )


async def test_anthropic_without_a_split_has_no_hour_writes() -> None:
    body = message("Old.", input_tokens=5, cache_creation_input_tokens=40)
    with ANTHROPIC.server([body]) as api:
        response = await ANTHROPIC.model(api).request(ask())
    assert response.usage == ProviderUsage(5, 10, 0, 40, 0)


@pytest.mark.parametrize(("five", "hour", "total"), [(0, 1600, 1500), (-1, 0, 10), (0, "x", 5)])
async def test_anthropic_a_split_that_is_no_bill_is_refused(
    five: Any, hour: Any, total: int
) -> None:
    with (
        ANTHROPIC.server([_with_split(five, hour, total)]) as api,
        pytest.raises(MalformedReply, match="usage"),
    ):
        await ANTHROPIC.model(api, max_retries=0).request(ask())


def _chat(**usage: Any) -> dict[str, Any]:
    body = completion("Hi.", prompt_tokens=1000, completion_tokens=300)
    body["usage"].update(usage)
    return body


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # OpenAI: reads among the prompt tokens, reasoning among the completion tokens.
        (
            {
                "prompt_tokens_details": {"cached_tokens": 640, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 256},
            },
            ProviderUsage(360, 300, 640, 0),
        ),
        # OpenRouter: the writes too ("Usage Accounting").
        (
            {"prompt_tokens_details": {"cached_tokens": 200, "cache_write_tokens": 700}},
            ProviderUsage(100, 300, 200, 700),
        ),
        # DeepSeek: hits and misses beside the prompt tokens.
        (
            {
                "prompt_tokens_details": None,
                "prompt_cache_hit_tokens": 900,
                "prompt_cache_miss_tokens": 100,
            },
            ProviderUsage(100, 300, 900, 0),
        ),
    ],
    ids=["openai", "openrouter", "deepseek"],
)
async def test_openai_compatible_usage_to_the_token(
    usage: dict[str, Any], expected: ProviderUsage, stream: bool
) -> None:
    with OPENAI.server([_chat(**usage)]) as api:
        response = await OPENAI.model(api, stream=stream).request(ask())
    assert response.usage == expected


def test_an_imported_chat_usage_is_read_alike() -> None:
    from ctxlab.io.formats._chat import openai_usage

    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 300,
        "prompt_tokens_details": {"cached_tokens": 200, "cache_write_tokens": 700},
    }
    assert openai_usage(usage) == ProviderUsage(100, 300, 200, 700)
