"""A usage's ``iterations`` (the sampling and compaction calls of one request: a server
compaction is billed from its entry, beside the request) that holds what no bill has — a count
that is NaN, negative, text or past any text, an entry that is no call, a list that is none — is
a `MalformedReply` naming the entry and field, as a bad top-level count is: never shown as a
compaction of 0 tokens. Nothing of the reply enters the session; the next call works."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import MalformedReply
from tests.hostile import says
from tests.models.messages_api import MessagesAPI, message
from tests.models.test_anthropic import model_for

COMPACTION = {
    "type": "compaction",
    "input_tokens": 152_000,
    "output_tokens": 2_100,
    "cache_read_input_tokens": 0,
    "cache_creation_input_tokens": 0,
}
EDITS = {"edits": [{"type": "compact_20260112"}]}


def _with(iterations: Any) -> dict[str, Any]:
    reply = message("Done.")
    reply["usage"]["iterations"] = iterations
    return reply


# The SDK warns as it dumps a count of the wrong type: its warning, not ctxlab's.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("bad", [math.nan, -5, "many", 2**70, 2.5, True, [1]])
@pytest.mark.parametrize("field", ["input_tokens", "output_tokens", "cache_read_input_tokens"])
async def test_an_iterations_count_that_is_no_count(bad: Any, field: str) -> None:
    hostile = _with([{"type": "message", "input_tokens": 10, "output_tokens": 1}, COMPACTION])
    hostile["usage"]["iterations"][1] = {**COMPACTION, field: bad}
    with MessagesAPI([hostile, message("Fine now.")]) as api:
        agent = Agent(model=model_for(api, context_management=EDITS), counter=ApproximateCounter())
        with pytest.raises(MalformedReply) as caught:
            await agent("go")
        says(str(caught.value), "usage", f"iterations[1].{field}")
        assert not any(m.role == "assistant" for m in agent.context.conversation)
        assert (await agent("again")).content[0].text == "Fine now."  # type: ignore[union-attr]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize(
    ("iterations", "named"),
    [("many", "'iterations' is str"), ([5], "'iterations[0]' is int"), ({"a": 1}, "is dict")],
)
async def test_iterations_that_are_no_list_of_calls(iterations: Any, named: str) -> None:
    with MessagesAPI([_with(iterations)]) as api:
        agent = Agent(model=model_for(api, context_management=EDITS), counter=ApproximateCounter())
        with pytest.raises(MalformedReply) as caught:
            await agent("go")
        says(str(caught.value), "usage", named)


async def test_iterations_of_whole_counts_are_read() -> None:
    with MessagesAPI([_with([COMPACTION]), message("Fine now.")]) as api:
        agent = Agent(model=model_for(api, context_management=EDITS), counter=ApproximateCounter())
        await agent("go")
    (compaction,) = [t for t in agent.manifests[-1].transforms if t.target == "compact_20260112"]
    assert compaction.detail.startswith("the server's compaction call: 152,000 input,")
