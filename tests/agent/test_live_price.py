"""A live session's price after the provider's own edits: an agent whose Anthropic model clears
tool results on the server (``context_management``) is billed on the request the server edited,
rebuilt from what it reported clearing — checked against an independent bill of the edited
request (`tests.analysis.anthropic_bill`), and against the price before the edits (the
control: what was cleared would be billed)."""

from __future__ import annotations

from typing import Any

from ctxlab import Agent, ApproximateCounter, ContextConfig
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.config import ClearToolUses, ProviderEdits
from ctxlab.events import ContextBuildEvent, ModelResponseEvent
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.widgets._steps import StepLog
from tests.analysis.anthropic_bill import bill, reasoning_blocks
from tests.models.messages_api import MessagesAPI, message
from tests.models.test_anthropic import model_for, tool_use

PLACEHOLDER = ClearToolUses().placeholder


def read(page: int) -> str:
    """Read a page of the log."""
    return f"page {page}: " + "request failed with status 500 at line 42\n" * 120


def _cleared(request: ModelRequest, count: int) -> ModelRequest:
    """``request`` with the results of its ``count`` oldest tool uses cleared — written here
    from the documented edit, not with ctxlab's."""
    uses = [u.id for m in request.messages if isinstance(m, AssistantMessage) for u in m.tool_uses]
    gone = set(uses[:count])
    messages = []
    for m in request.messages:
        if isinstance(m, UserMessage) and m.tool_results:
            m = UserMessage(
                content=tuple(
                    b.evolve(content=PLACEHOLDER)
                    if isinstance(b, ToolResultBlock) and b.tool_use_id in gone
                    else b
                    for b in m.content
                )
            )
        messages.append(m)
    return ModelRequest(
        system=request.system,
        messages=tuple(messages),
        tools=request.tools,
        material_messages=request.material_messages,
    )


async def test_the_price_of_a_request_the_server_edited_leaves_out_what_it_cleared() -> None:
    config = ContextConfig.preset("anthropic_context_editing").merge(
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses(keep=1))
    )
    replies: list[dict[str, Any]] = [
        message([tool_use(f"toolu_{n}", "read", page=n)], input_tokens=500) for n in range(4)
    ]
    done = message("All four pages say the same.", input_tokens=900)
    done["context_management"] = {
        "applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 1}
        ]
    }
    replies.append(done)
    events: list[object] = []
    with MessagesAPI(replies) as api:
        model = model_for(api, context_management=config)
        agent = Agent(
            model=model,
            tools=[read],
            counter=ApproximateCounter(),
            system_prompt="Log reader. " * 200,
        )
        agent.subscribe(events.append)
        await agent("Read pages 0 to 3.")
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert len(builds) == 5
    last = agent.manifests[-1]
    assert last.provider_items is not None
    billed_results = [i for i in last.provider_items if i.role == "user"]
    # The three oldest results are the placeholder in what is billed; the latest is whole.
    cleared_tokens = sum(i.tokens for i in last.items) - sum(i.tokens for i in last.provider_items)
    assert cleared_tokens > 3 * 500
    costs = costs_of_manifests(agent.manifests)
    # The independent bill: the first four requests as sent, the last as the server edited it.
    cache = agent._preparer.cache
    requests = [
        (reasoning_blocks(b.request, b.manifest, cache), m.provider_usage.output_tokens)  # type: ignore[arg-type, union-attr]
        for b, m in zip(builds[:4], agent.manifests[:4], strict=True)
    ]
    edited = _cleared(builds[4].request, 3)  # type: ignore[arg-type]
    from dataclasses import replace

    as_billed = replace(last, items=last.provider_items)
    requests.append((reasoning_blocks(edited, as_billed, cache), last.provider_usage.output_tokens))  # type: ignore[union-attr]
    expected = bill(requests)
    assert [(c.uncached, c.cache_write, c.cache_read) for c in costs] == [
        (b.uncached, b.written, b.read) for b in expected
    ]
    # The control: priced as sent (before the edits), the cleared results are billed.
    unedited = costs_of_manifests([*agent.manifests[:4], replace(last, provider_items=None)])
    assert unedited[-1].input_tokens - costs[-1].input_tokens == cleared_tokens
    # The Lab's step log prices the same requests the same way (its manifests come with the
    # response events).
    log = StepLog()
    for event in events:
        log.feed(event)  # type: ignore[arg-type]
    assert log.frame()["cost"].sum() == sum(c.cost for c in costs)
    assert any(isinstance(e, ModelResponseEvent) and e.manifest is not None for e in events)
    assert billed_results
