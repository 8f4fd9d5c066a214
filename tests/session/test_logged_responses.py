"""A model response's ``from_cache`` and ``retries`` travel from the model to the agent's
`ModelResponseEvent` and into the session log, and read back as they were
(`SessionLog.responses`); a log written before they were kept reads as no cache, no retries."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from ctxlab import ApproximateCounter, SessionLog
from ctxlab.agent import Agent, ModelResponseEvent
from ctxlab.messages import AssistantMessage, ProviderUsage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import Model, ModelResponse, RetryWait
from ctxlab.session import LoggedResponse

WAITS = (
    RetryWait(attempt=1, status_code=529, seconds=2.5, source="retry-after"),
    RetryWait(attempt=2, status_code=None, seconds=0.75, source="backoff"),
)


class _Answering(Model):
    """Answers "first" from its cache and "second" after two retries."""

    def __init__(self) -> None:
        self.name = "answering"
        self.context_window = 8_000
        self.seen = 0

    async def request(self, request: ModelRequest, **_: object) -> ModelResponse:
        self.seen += 1
        usage = ProviderUsage(input_tokens=100 * self.seen, output_tokens=5)
        cached = self.seen == 1
        return ModelResponse(
            message=AssistantMessage(content=f"reply {self.seen}"),
            usage=usage,
            model=self.name,
            from_cache=cached,
            retries=() if cached else WAITS,
        )


async def test_from_cache_and_retries_reach_the_event_and_the_log(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "log.sqlite")
    agent = Agent(model=_Answering(), counter=ApproximateCounter(), session_log=log, session_id="s")
    seen: list[ModelResponseEvent] = []
    agent.subscribe(lambda e: seen.append(e) if isinstance(e, ModelResponseEvent) else None)
    await agent("first")
    await agent("second")
    assert [(e.from_cache, e.retries) for e in seen] == [(True, ()), (False, WAITS)]
    ids = [m.request_id for m in agent.manifests if m.purpose == "reasoning"]
    back = SessionLog(tmp_path / "log.sqlite").responses(agent.log.key)
    assert back == [
        LoggedResponse(ids[0], "end_turn", ProviderUsage(input_tokens=100, output_tokens=5), True),
        LoggedResponse(
            ids[1], "end_turn", ProviderUsage(input_tokens=200, output_tokens=5), False, WAITS
        ),
    ]


async def test_a_log_written_before_reads_as_no_cache_and_no_retries(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "log.sqlite")
    agent = Agent(model=_Answering(), counter=ApproximateCounter(), session_log=log, session_id="s")
    await agent("first")
    # The payload as an older ctxlab wrote it: no from_cache, no retries.
    old = {"request_id": "r1", "stop": "end_turn", "usage": None}
    key = agent.log.key
    log.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "log.sqlite")) as connection:
        connection.execute(
            "UPDATE events SET payload=? WHERE kind='model_response'", (json.dumps(old),)
        )
        connection.commit()
    assert SessionLog(tmp_path / "log.sqlite").responses(key) == [
        LoggedResponse("r1", "end_turn", None)
    ]
