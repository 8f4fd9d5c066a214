"""Preparation tokenizes a text once (issue 54, preparation near the floor): a summary request's
piece cut to its room takes the whole text's count the cache holds, and a prune that waits for
its savings counts each preview once over the steps; the results are the ones counting afresh
gives."""

from __future__ import annotations

from ctxlab import ApproximateCounter, AssistantMessage, TextBlock, TokenCache, UserMessage
from ctxlab.config import PruneConfig
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from ctxlab.pipeline._passes import prune_tool_output
from ctxlab.pipeline._summary_calls import _cut_texts
from ctxlab.tokens import head_within
from tests.helpers import CountingCounter

LOG = "\n".join(f"line {n}: value {n * 7} of the pasted log" for n in range(400))
SCRIPT = "\n".join(f"print({n})  # a long script the agent wrote" for n in range(300))


def test_a_long_text_is_cut_without_counting_it_again() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    piece = (UserMessage(content=(TextBlock(text=LOG),)),)
    size = cache.block(piece[0].content[0])
    assert counter.calls.count(LOG) == 1  # the cache's own count
    over = size // 2
    (cut,) = _cut_texts(piece, over, cache)
    assert counter.calls.count(LOG) == 1  # not tokenized again to be cut
    keep = max(size - over - 32, 32)
    wanted = head_within(LOG, keep, ApproximateCounter().count_text)
    assert cut.content[0].text == f"{wanted}\n[... cut here for the summary request]"


def test_a_long_argument_is_cut_without_counting_it_again() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    call = ToolUseBlock(id="c1", name="write_file", input={"path": "a.py", "content": SCRIPT})
    piece = (AssistantMessage(content=(call,)),)
    size = cache.block(call)
    over = size // 2
    (cut,) = _cut_texts(piece, over, cache)
    assert counter.calls.count(SCRIPT) == 1  # once, for the cache: not again to be cut
    keep = max(size - over - 32, 32)
    rest = size - ApproximateCounter().count_text(SCRIPT)
    wanted = head_within(SCRIPT, max(keep - rest, 16), ApproximateCounter().count_text)
    assert cut.content[0].input == {
        "path": "a.py",
        "content": f"{wanted}\n[... cut here for the summary request]",
    }


def _tool_loop(results: int) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content=(TextBlock(text="go"),))]
    for n in range(results):
        call = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat log{n}"})
        messages.append(AssistantMessage(content=(call,)))
        output = "\n".join(f"log {n} line {k}: {k * n}" for k in range(200))
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=output),))
        )
    return messages


def test_a_prune_that_waits_counts_each_preview_once() -> None:
    # Savings under the minimum: nothing pruned, and the pass runs again at the next step over
    # the same older results — their previews are not tokenized again.
    counter = CountingCounter()
    cache = TokenCache(counter)
    conversation = _tool_loop(6)
    config = PruneConfig(protect_tokens=10, minimum_prunable_tokens=10**6, preview_chars=100)
    first = prune_tool_output(conversation, config, cache)
    counted = len(counter.calls)
    again = prune_tool_output(conversation, config, cache)
    assert again == first == (tuple(conversation), [])
    assert len(counter.calls) == counted  # nothing tokenized at the second step
    previews = [t for t in counter.calls if len(t) == 100]
    assert len(previews) == 5  # every result but the newest (never pruned)
    # Pruned when the savings reach the minimum: the same previews as counting them afresh.
    cut, transforms = prune_tool_output(
        conversation, config.model_copy(update={"minimum_prunable_tokens": 1}), cache
    )
    assert len(transforms) == 5
    fresh = TokenCache(ApproximateCounter())
    assert [t.tokens_after for t in transforms] == [
        fresh.block(b) for m in cut if isinstance(m, UserMessage) for b in m.tool_results
    ][:5]
