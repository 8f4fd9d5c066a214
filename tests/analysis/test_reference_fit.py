"""The feasible baseline's requests (`reference_shapes` with a limit), on the parts each
request sends: a dropped turn stays dropped even when room grows again, and the latest turn —
a call and its result — is never split: when it alone does not fit, its result is cut and the
request counted over the limit."""

from __future__ import annotations

from ctxlab.analysis._references import reference_shapes
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.tokens import ApproximateCounter, TokenCache


def _turn(n: int, size: int) -> list[UserMessage | AssistantMessage]:
    call = AssistantMessage(content=(ToolUseBlock(id=f"c{n}", name="read", input={"n": n}),))
    result = UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content="x " * size),))
    return [call, result]


def _session(*sizes: int) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read the parts.")]
    for n, size in enumerate(sizes):
        messages += _turn(n, size)
    return [*messages, AssistantMessage(content="Done.")]


def test_a_dropped_turn_stays_dropped_when_room_grows_again() -> None:
    messages = _session(300, 300, 20, 20)
    cache = TokenCache(ApproximateCounter())

    # A recording whose first requests carried a large fixed part (one model's System prompt
    # and tools), the later ones a small one: room grows after the third reply.
    def fixed(reply: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        return (("fixed",), (700,)) if reply <= 5 else (("fixed",), (10,))

    shapes = reference_shapes(messages, cache, fixed, input_limit=1_000, limit=1_000).shapes
    keys = [set(shape.keys) for shape in shapes]
    first_call = messages[1].content_hash
    assert first_call in keys[1]  # sent with the second request (the first has only the task)
    dropped_at = next(i for i, k in enumerate(keys) if i > 1 and first_call not in k)
    assert dropped_at < len(keys) - 1  # dropped before the last request ...
    assert all(first_call not in k for k in keys[dropped_at:])  # ... and never sent again
    # The control: with the small fixed part throughout, nothing is ever dropped.
    roomy = reference_shapes(messages, cache, (("fixed",), (10,)), 1_000, 1_000).shapes
    assert all(first_call in set(shape.keys) for shape in roomy[1:])


def test_a_latest_turn_that_alone_does_not_fit_is_cut_not_split() -> None:
    messages = _session(50, 3_000)
    cache = TokenCache(ApproximateCounter())
    fixed = (("fixed",), (100,))
    found = reference_shapes(messages, cache, fixed, input_limit=1_000, limit=1_000)
    last = found.shapes[-1]
    latest_call = messages[3].content_hash
    assert found.over_limit == 1
    # The first message, the latest call and its result cut to what is left of the limit.
    assert list(last.keys) == ["fixed", messages[0].content_hash, latest_call, "cut/5"]
    assert sum(last.tokens) == 1_000


def test_a_result_is_never_sent_without_its_call() -> None:
    # The latest call is the large part (its arguments), its result small: dropping the call
    # to fit would send the result alone, which no provider takes.
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Write the file.")]
    big = AssistantMessage(content=(ToolUseBlock(id="w", name="write", input={"t": "y " * 3_000}),))
    messages += [big, UserMessage(content=(ToolResultBlock(tool_use_id="w", content="ok"),))]
    messages.append(AssistantMessage(content="Written."))
    cache = TokenCache(ApproximateCounter())
    found = reference_shapes(messages, cache, (("fixed",), (100,)), 1_000, 1_000)
    last = found.shapes[-1]
    assert found.over_limit == 1
    assert messages[1].content_hash in last.keys  # the call is sent, its result cut
    assert messages[2].content_hash not in last.keys


def test_a_first_message_larger_than_the_room_is_sent_alone_never_with_its_reply() -> None:
    # The task alone passes the limit: its request is the task (over the limit, counted),
    # never the reply it produced; the later requests continue after it.
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="z " * 2_000)]
    messages += _session(10)[1:]
    cache = TokenCache(ApproximateCounter())
    task = cache.message(messages[0])
    found = reference_shapes(messages, cache, (("fixed",), (100,)), 1_000, 1_000)
    first = found.shapes[0]
    assert list(first.keys) == ["fixed", messages[0].content_hash]
    assert list(first.tokens) == [100, task]
    assert found.over_limit == len(found.shapes) == 2
    # The second request: the task, the call, and no result (nothing of the room is left).
    assert list(found.shapes[1].keys) == [
        "fixed",
        messages[0].content_hash,
        messages[1].content_hash,
    ]


def test_a_lead_too_large_is_cut_whole_to_the_room_left() -> None:
    # The task, then a user message before any reply (a pasted log): the first request's
    # latest turn is that message, which has no call — all of it is cut to what is left.
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read the log.")]
    messages += [UserMessage(content="log " * 3_000), *_session(10)[1:]]
    cache = TokenCache(ApproximateCounter())
    task = cache.message(messages[0])
    found = reference_shapes(messages, cache, (("fixed",), (100,)), 1_000, 1_000)
    first = found.shapes[0]
    assert list(first.keys) == ["fixed", messages[0].content_hash, "cut/2"]
    assert list(first.tokens) == [100, task, 1_000 - 100 - task]
    assert found.over_limit == 1
    # The next request drops that lead whole: the task, the call and its result.
    second = found.shapes[1]
    assert list(second.keys) == ["fixed", *(messages[i].content_hash for i in (0, 2, 3))]
