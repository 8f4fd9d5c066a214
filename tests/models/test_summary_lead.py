"""The cached form of a summary call after an earlier compaction: the last request led with the
earlier summary's message, and the call sends that same message first (the summary's own,
`Summary.message`, built once per summary) — the same request as one that led with an equal
copy, and no cached form when the last request led with another summary."""

from __future__ import annotations

from ctxlab import ContextConfig
from ctxlab.messages import UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import Summary
from ctxlab.models import cached_summary_request
from ctxlab.pipeline import SummaryRequest
from tests.models.test_summary_forms import SYSTEM, TOOLS, _conversation


def _after(previous: Summary) -> tuple[SummaryRequest, ModelRequest]:
    conversation = _conversation()
    last = ModelRequest(system=SYSTEM, messages=(previous.message, *conversation[:7]), tools=TOOLS)
    config = ContextConfig()
    ask = SummaryRequest(
        conversation[:7],
        previous,
        config.summary_schema,
        config.compression_prompt,
        kept=conversation[7:],
        input_limit=10**6,
    )
    return ask, last


def test_the_call_leads_with_the_summarys_own_message() -> None:
    previous = Summary(fields={"task_overview": "fix it"}, text="Summary: fix the test.")
    ask, last = _after(previous)
    sent = cached_summary_request(ask, last)
    assert sent is not None
    assert sent.messages[0] is previous.message  # not a copy built for the call
    assert sent.messages[1:8] == last.messages[1:]
    # A last request that led with an equal copy is continued alike: the same request.
    copy = UserMessage(content=previous.message.content)
    again = cached_summary_request(ask, ModelRequest(SYSTEM, (copy, *last.messages[1:]), TOOLS))
    assert again is not None and again.messages == sent.messages


def test_a_last_request_led_by_another_summary_is_not_continued() -> None:
    previous = Summary(text="Summary: fix the test.")
    ask, last = _after(previous)
    other = Summary(text="Summary: something else.")
    led_by_other = ModelRequest(SYSTEM, (other.message, *last.messages[1:]), TOOLS)
    assert cached_summary_request(ask, led_by_other) is None
