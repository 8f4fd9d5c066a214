"""A summary call is billed like any request: a fork's run on `AnthropicModel` (a local server
speaking the Messages API, never the network) compacts, and the summary call's usage — what
the server reported for it — reaches the run's ``cost`` as it reaches its ``spent``. Before,
`Model.summarize` dropped it: ``cost`` priced the summary call's estimate while ``spent``
charged its usage.

The dollars are the test's own: Anthropic's published price of Claude Sonnet 4.6 ($3 input,
$15 output, $0.30 cache read per million tokens) times the tokens the server answered with."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ctxlab import ApproximateCounter, ContextConfig, SessionLog
from ctxlab.agent import Agent
from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done
from ctxlab.fork import fork, run_forward
from tests.fork.helpers import demo_session
from tests.fork.test_real_models import _anthropic_answer
from tests.models.messages_api import MessagesAPI, message, sonnet

WINDOW, OUTPUT = 8_000, 512
SUMMARY = {
    "task_overview": "fix the sample project",
    "current_state": "files read",
    "important_discoveries": "none",
    "next_steps": "run the tests",
    "context_to_preserve": "src/",
}
REASONING_USAGE = {"input_tokens": 1000, "output_tokens": 50}
SUMMARY_USAGE = {"input_tokens": 1200, "cache_read_input_tokens": 400, "output_tokens": 300}
PER_MILLION = {"input_tokens": 3.0, "output_tokens": 15.0, "cache_read_input_tokens": 0.30}


def _dollars(usage: dict[str, int]) -> float:
    return math.fsum(n * PER_MILLION[k] / 1e6 for k, n in usage.items())


def _is_summary(body: dict[str, Any]) -> bool:
    return "JSON Schema" in json.dumps(body["messages"][-1])


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    # A reasoning request: the offline policy's answer, billed 1,000 in and 50 out.
    if _is_summary(body):
        return message(json.dumps(SUMMARY), **SUMMARY_USAGE)
    return _anthropic_answer(body)


async def test_a_summary_calls_usage_reaches_the_runs_cost_as_its_spent(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "origin")
    with MessagesAPI(responder=_answer) as api:
        model = sonnet(api, max_tokens=OUTPUT, context_window=WINDOW)
        branch = await fork(
            session.agent,
            at=1,
            config=demo_config(trigger_ratio=0.3, reserve_ratio=0.1),
            model=model,
            workspace=DEMO_WORKSPACE,
            root=tmp_path / "b",
        )
        outcomes = await run_forward(branch, check=task_done, max_steps=12)
        bodies = list(api.requests)
    summaries = sum(_is_summary(b) for b in bodies)
    assert summaries >= 1  # the run compacted, by a call to the server
    expected = (len(bodies) - summaries) * _dollars(REASONING_USAGE) + summaries * _dollars(
        SUMMARY_USAGE
    )
    (run,) = outcomes.runs
    row = outcomes.row(run)
    assert row["spent"] == pytest_approx(expected)
    assert row["cost"] == pytest_approx(expected)
    assert row["cost_from"] == "usage"  # every request of the run billed
    billed = [m for m in run.manifests if m.purpose == "summary"]
    assert len(billed) == summaries
    assert all(m.provider_usage is not None for m in billed)
    assert [m.provider_usage.cache_read_input_tokens for m in billed] == [400] * summaries  # type: ignore[union-attr]


def pytest_approx(value: float) -> Any:
    import pytest

    return pytest.approx(value, rel=1e-9, abs=1e-12)


def _page(page: int) -> str:
    """Fetch a page of the log."""
    return f"page {page} /var/log/app-{page}.log\n" + "lorem ipsum " * 100


async def test_a_summary_answer_that_does_not_read_is_billed_all_the_same() -> None:
    # Every summary attempt answers prose (no JSON): the compaction falls back to truncation,
    # and each attempt's manifest still carries what the server billed for it.
    use = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "_page", "input": {"page": i}}
        for i in range(3)
    ]
    prose = message("I would rather not.", input_tokens=900, output_tokens=7)
    script = [*(message([u]) for u in use), message("first"), prose, prose, prose, prose]
    with MessagesAPI(script) as api:
        agent = Agent(
            model=sonnet(api, context_window=2_000, max_tokens=200),
            tools=[_page],
            counter=ApproximateCounter(),
        )
        await agent("Read three pages")
        await agent.compress_context(ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1))
        asked = sum(_is_summary(b) for b in api.requests)
    summaries = [m for m in agent.manifests if m.purpose == "summary"]
    assert asked >= 1 and len(summaries) == asked
    assert [(m.provider_usage.input_tokens, m.provider_usage.output_tokens) for m in summaries] == [  # type: ignore[union-attr]
        (900, 7)
    ] * asked


async def test_a_summary_calls_bill_is_read_back_when_the_session_resumes(tmp_path: Path) -> None:
    # The summary call has no response event of its own: its usage must reach the log another
    # way, or a resumed session's manifests show the call unbilled (priced at its estimate).
    calls = {"reasoning": 0}

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if _is_summary(body):
            return message(json.dumps(SUMMARY), **SUMMARY_USAGE)
        calls["reasoning"] += 1
        n = calls["reasoning"]
        if n <= 3:
            use = {"type": "tool_use", "id": f"toolu_{n}", "name": "_page", "input": {"page": n}}
            return message([use], input_tokens=500, output_tokens=20)
        return message("done", input_tokens=600, output_tokens=4)

    def make(url: str) -> Agent:
        return Agent(
            model=sonnet(url, context_window=4_000, max_tokens=200),
            tools=[_page],
            counter=ApproximateCounter(),
            session_log=SessionLog(tmp_path / "log.sqlite"),
            session_id="s",
        )

    with MessagesAPI(responder=answer) as api:
        agent = make(api.url)
        await agent("Read three pages")
        await agent.compress_context(force=True)
        await agent("And now?")  # commits the turn that holds the compaction
        live = [m for m in agent.manifests if m.purpose == "summary"]
        resumed = make(api.url)
    back = [m for m in resumed.manifests if m.purpose == "summary"]
    assert len(live) == 1 and [m.request_id for m in back] == [live[0].request_id]
    assert back[0].provider_usage == live[0].provider_usage
    usage = back[0].provider_usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (1200, 300)
