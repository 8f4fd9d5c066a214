"""`ObservedSession` in each mode: in "observe" no failure of ctxlab's reaches the framework —
it is recorded and the framework's messages go out unchanged; in "manage" it is raised."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ObservedSession
from ctxlab.events import ErrorEvent
from ctxlab.exceptions import ContextBudgetExceeded
from ctxlab.messages import AssistantMessage, UserMessage

HUGE = UserMessage(content="pasted log line\n" * 5_000)


def _session(mode: str, **kwargs: object) -> ObservedSession:
    return ObservedSession(
        context_window=4_000,
        counter=ApproximateCounter(),
        mode=mode,  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


async def test_observe_mode_records_a_request_that_cannot_fit_and_sends_the_messages() -> None:
    session = _session("observe")
    events: list[object] = []
    session.subscribe(events.append)
    messages = [UserMessage(content="hello"), AssistantMessage(content="hi"), HUGE]
    assert await session.prepare(messages) == messages  # untouched
    assert session.manifests[-1].validation == "budget_exceeded"
    assert isinstance(session.last_error, ContextBudgetExceeded)
    assert [type(e).__name__ for e in events][-1] == "ErrorEvent"
    # The next call goes on, from the framework's own messages.
    shorter = [
        UserMessage(content="hello"),
        AssistantMessage(content="hi"),
        UserMessage(content="ok"),
    ]
    assert await session.prepare(shorter) == shorter
    assert session.manifests[-1].validation == "passed"


async def test_manage_mode_raises_what_cannot_be_sent() -> None:
    session = _session("manage")
    with pytest.raises(ContextBudgetExceeded):
        await session.prepare([UserMessage(content="hello"), AssistantMessage(content="hi"), HUGE])


async def test_observe_mode_survives_any_failure_inside_ctxlab() -> None:
    class Broken(ApproximateCounter):
        def count_text(self, text: str) -> int:
            if "boom" in text:
                raise RuntimeError("the counter's own bug")
            return super().count_text(text)

    session = ObservedSession(context_window=4_000, counter=Broken(), mode="observe")
    errors: list[ErrorEvent] = []
    session.subscribe(lambda e: errors.append(e) if isinstance(e, ErrorEvent) else None)
    first = [UserMessage(content="hello")]
    assert await session.prepare(first) == first
    broken = [*first, AssistantMessage(content="hi"), UserMessage(content="boom")]
    assert await session.prepare(broken) == broken
    assert errors[0].message == "RuntimeError: the counter's own bug"
    assert session.last_error is errors[0].error and not session.running
    # The next call after the failure starts again from the framework's messages.
    after = [*first, AssistantMessage(content="hi"), UserMessage(content="fine")]
    assert await session.prepare(after) == after
    assert session.manifests[-1].validation == "passed"
    assert session.transcript().messages == tuple(after)
