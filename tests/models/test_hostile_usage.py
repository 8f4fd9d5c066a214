"""A provider that answers with a usage no bill can come from — negative, NaN, infinite, text,
past any text — is a `MalformedReply` (a `ModelError`) naming the usage, through the real SDKs
against the local servers: never a bare ``ValueError``, and nothing of the reply enters the
session; the next call works."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import MalformedReply, ModelError
from tests.hostile import says
from tests.models.chat_api import ChatAPI, completion
from tests.models.messages_api import MessagesAPI, message
from tests.models.test_anthropic import model_for as anthropic_for
from tests.models.test_openai import model_for as openai_for

NO_COUNTS = [-5, math.nan, math.inf, "many", 2**70, 2.5]


# The SDK's stream accumulator warns as it copies a usage of the wrong type: its warning, not
# ctxlab's (an error under the suite's ``filterwarnings = error``).
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("bad", NO_COUNTS)
async def test_an_anthropic_usage_that_is_no_count(stream: bool, bad: Any) -> None:
    hostile = message("Done.")
    hostile["usage"]["cache_read_input_tokens"] = bad
    if stream:
        hostile["usage"]["output_tokens"] = 3  # (the stream carries output in its delta)
    with MessagesAPI([hostile, message("Fine now.")]) as api:
        agent = Agent(model=anthropic_for(api, stream=stream), counter=ApproximateCounter())
        with pytest.raises(MalformedReply) as caught:
            await agent("go")
        assert isinstance(caught.value, ModelError)
        says(str(caught.value), "usage", "cache_read_input_tokens")
        assert not any(m.role == "assistant" for m in agent.context.conversation)
        assert (await agent("again")).content[0].text == "Fine now."  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", NO_COUNTS)
async def test_an_openai_usage_that_is_no_count(bad: Any) -> None:
    hostile = completion("Done.")
    hostile["usage"]["prompt_tokens"] = bad
    with ChatAPI([hostile, completion("Fine now.")]) as api:
        agent = Agent(model=openai_for(api), counter=ApproximateCounter())
        try:
            await agent("go")
        except MalformedReply as exc:
            says(str(exc), "usage", "input_tokens")
        except ModelError as exc:  # the SDK refused the body itself: a ModelError too
            says(str(exc), "usage")
        else:
            pytest.fail("a usage that is no count was taken")
        assert not any(m.role == "assistant" for m in agent.context.conversation)
        assert (await agent("again")).content[0].text == "Fine now."  # type: ignore[union-attr]
