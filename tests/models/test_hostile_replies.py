"""A provider that answers with what no provider sends — a usage no bill can come from
(negative, NaN, infinite, text, past any text), a body that is not JSON or not UTF-8, JSON that
is no reply, a stream of nothing or of events out of shape — is a `MalformedReply` (a
`ModelError`) naming it, through the real SDKs against local servers: never a bare ``ValueError``
or ``AttributeError`` from the SDK, and nothing of the reply enters the session; the next call
works. (Found by the fuzz harness, tests/fuzz/test_fuzz_models.py, and kept here.)"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import MalformedReply, ModelError
from tests.hostile import says
from tests.models._local_server import RawServer
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


def _events(*events: tuple[str, object]) -> bytes:
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


ANTHROPIC_BODIES = [
    (False, (200, "application/json", b"")),  # no body
    (False, (200, "application/json", b'{"id": ')),  # not JSON
    (False, (200, "application/json", b"\xfb\xff")),  # not UTF-8
    (False, (200, "application/json", b'"just text"')),  # JSON, no message
    (True, (200, "text/event-stream", b"")),  # a stream of nothing
    (True, (200, "text/event-stream", _events(("message_start", {"type": "message_start"})))),
    (True, (200, "text/event-stream", _events(("content_block_start", "text")))),
]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize(("stream", "answer"), ANTHROPIC_BODIES)
async def test_a_messages_api_body_that_is_no_reply(stream: bool, answer: Any) -> None:
    import anthropic

    from ctxlab.models import AnthropicModel

    with RawServer(answer) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
        agent = Agent(
            model=AnthropicModel(client=client, stream=stream), counter=ApproximateCounter()
        )
        with pytest.raises(ModelError) as caught:
            await agent("go")
    says(str(caught.value), "reply")
    assert not any(m.role == "assistant" for m in agent.context.conversation)


CHAT_BODIES = [
    (200, "application/json", b""),
    (200, "application/json", b'{"choices": '),
    (200, "application/json", b"\xfb\xff"),
    (200, "application/json", b'{"choices": null}'),
    (200, "application/json", b'{"choices": [{"message": "text"}]}'),
]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("answer", CHAT_BODIES)
async def test_a_chat_completions_body_that_is_no_reply(answer: Any) -> None:
    import openai

    from ctxlab.models import OpenAIModel

    with RawServer(answer) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.url, max_retries=0)
        agent = Agent(model=OpenAIModel("m", client=client), counter=ApproximateCounter())
        with pytest.raises(ModelError) as caught:
            await agent("go")
    says(str(caught.value), "reply")
    assert not any(m.role == "assistant" for m in agent.context.conversation)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("counted", [-5, "many", 2**70, None])
async def test_an_exact_count_that_is_no_count(counted: Any) -> None:
    import anthropic

    from ctxlab.messages import UserMessage
    from ctxlab.messages._request import ModelRequest
    from ctxlab.models import AnthropicModel

    body = json.dumps({"input_tokens": counted}).encode()
    with RawServer((200, "application/json", body)) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
        model = AnthropicModel(client=client)
        request = ModelRequest(system="s", messages=(UserMessage(content="hello"),), tools=())
        with pytest.raises(MalformedReply) as caught:
            await model.count_tokens(request)
    says(str(caught.value), "not a token count")
