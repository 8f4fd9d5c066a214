"""The events below the agent: each names its type, and `Subscribers` hands every event to
every callback — a failing one is logged, not raised into the run, and does not stop the rest."""

from __future__ import annotations

import logging
import typing

import pytest

from ctxlab import events
from ctxlab.events import ErrorEvent, Event, ReplyEvent, Subscribers, TurnCommittedEvent
from ctxlab.messages import AssistantMessage, TextBlock


def test_every_event_names_its_own_type() -> None:
    names = {
        cls.__name__: cls.__dataclass_fields__["type"].default for cls in typing.get_args(Event)
    }
    # One name per class, and the name is the class's (ReplyEvent → "reply").
    assert len(set(names.values())) == len(names) == 9
    for cls_name, type_name in names.items():
        assert cls_name.removesuffix("Event").lower() == type_name.replace("_", "")
    assert set(events.__all__) >= {n for n in names}


def test_subscribers_survive_a_failing_callback(caplog: pytest.LogCaptureFixture) -> None:
    subscribers = Subscribers()
    seen: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("a subscriber's own bug")

    subscribers.subscribe(broken)
    unsubscribe = subscribers.subscribe(lambda e: seen.append(e.type))
    reply = ReplyEvent(AssistantMessage(content=(TextBlock(text="done"),)), call="c1")
    with caplog.at_level(logging.ERROR, logger="ctxlab.agent"):
        subscribers.emit(reply)
    assert seen == ["reply"] and reply.text == "done"
    assert "a subscriber's own bug" in caplog.text
    unsubscribe()
    subscribers.emit(TurnCommittedEvent(turn=1, messages=2))
    assert seen == ["reply"]
    assert ErrorEvent(ValueError("bad input")).message == "ValueError: bad input"
