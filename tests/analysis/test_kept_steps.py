"""What a what-if keeps of each replayed step (`ctxlab.analysis._config_run`): the step without
its request, every other field as the replay yielded it — built field by field for speed, so a
field added to `ReplayStep` and not carried over would be lost without this test."""

from __future__ import annotations

import dataclasses

from ctxlab import ApproximateCounter, AssistantMessage, UserMessage
from ctxlab.analysis._config_run import _without_request
from ctxlab.analysis._replay import ReplayStep, replay


async def test_every_field_but_the_request_is_kept() -> None:
    messages = [
        UserMessage(content="fix the bug"),
        AssistantMessage(content="looking"),
        UserMessage(content="and the test"),
        AssistantMessage(content="done"),
    ]
    steps = [s async for s in replay(messages, context_window=10_000, counter=ApproximateCounter())]
    # A step with every field set (the rule that asked is read as the replay would set it).
    step = dataclasses.replace(steps[-1], asked="task")
    assert step.request is not None and step.number == 1
    kept = _without_request(step)
    assert kept.request is None
    for f in dataclasses.fields(ReplayStep):
        if f.name != "request":
            assert getattr(kept, f.name) is getattr(step, f.name), f.name
    # The same as the general form it replaces (request is not compared: compare=False).
    assert kept == dataclasses.replace(step, request=None)
    assert (kept.index, kept.number, kept.asked) == (3, 1, "task")
