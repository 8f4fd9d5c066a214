"""A step source's arguments are checked when it is made: a `UsageError` naming the argument."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import Transcript
from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.sources import ObservedSession, ReplaySession


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(UsageError, match="mode must be 'manage' or 'observe', got 'bogus'"):
        ObservedSession(context_window=32_000, mode="bogus")  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [0, -1, "x", None])
def test_a_window_that_is_no_window_is_refused(window: Any) -> None:
    with pytest.raises(UsageError, match="context_window must be a whole number"):
        ObservedSession(context_window=window)
    session = Transcript("s", {}, "", (UserMessage(content="a"), AssistantMessage(content="b")))
    with pytest.raises(UsageError, match="context_window must be a whole number"):
        ReplaySession(session, context_window=window)
