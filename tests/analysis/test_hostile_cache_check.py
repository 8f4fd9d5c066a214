"""`cache_check` and `cache_agreement` on what is not theirs to take: a transcript that is a
path, a calibration that is a model's name, a counter that is text, a frame that is a list —
each a `UsageError` naming the argument and what to pass, before any work (a counter checked
even where the recording has no cache usage to check)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import Transcript, cache_check
from ctxlab.analysis import cache_agreement
from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from tests.hostile import says

NO_CACHE = Transcript(
    "s",
    {"models": ["claude-sonnet-4-5"]},
    "",
    (UserMessage(content="one " * 300), AssistantMessage(content="two")),
    usage={1: ProviderUsage(400, 30)},
)


@pytest.mark.parametrize(
    ("keywords", "parts"),
    [
        ({"transcript": "session.jsonl"}, ("transcript", "ctxlab.load")),
        ({"calibration": "claude"}, ("calibration", "ctxlab.calibrate(transcript)")),
        ({"counter": "cl100k"}, ("counter", "TiktokenCounter()")),
    ],
)
def test_a_wrong_argument_is_named_with_what_to_pass(
    keywords: dict[str, Any], parts: tuple[str, ...]
) -> None:
    arguments: dict[str, Any] = {"transcript": NO_CACHE, **keywords}
    transcript = arguments.pop("transcript")
    with pytest.raises(UsageError) as raised:
        cache_check(transcript, **arguments)
    says(str(raised.value), *parts)


@pytest.mark.parametrize("frame", [[], None, "frame", {"agrees": [True]}])
def test_cache_agreement_takes_only_a_cache_check_frame(frame: object) -> None:
    with pytest.raises(UsageError) as raised:
        cache_agreement(frame)  # type: ignore[arg-type]
    says(str(raised.value), "cache_agreement takes the frame", "cache_check(transcript)")
