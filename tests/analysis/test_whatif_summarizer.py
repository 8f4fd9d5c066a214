"""The what-if's summaries written by the user's own model (`WhatIf(summarizer=)`), under a dollar
cap: against a local server speaking the Messages API (no network), every summary call goes to
it and is paid at its usage by the price table's figures (typed here from the published price),
a what-if whose summaries' estimate passes the cap sends nothing, and one that reaches its cap
sends nothing after it — each later compaction says why it was not summarized."""

from __future__ import annotations

import dataclasses
import json
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from ctxlab import ApproximateCounter, ContextConfig, WhatIf, sweep
from ctxlab.exceptions import OverBudget, UsageError
from tests.analysis.test_whatif_table import _session
from tests.helpers import replayed
from tests.models.messages_api import MessagesAPI, message, sonnet

CONFIG = ContextConfig.preset("ctxlab")
MARK = "written by the local model"
SONNET_INPUT, SONNET_OUTPUT = 3.0, 15.0  # USD per million tokens, Anthropic's pricing page


def _summary(usage: dict[str, int]) -> Any:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        fields = {name: f"{name} {MARK}" for name in CONFIG.summary_schema["properties"]}
        return message(json.dumps(fields), **usage)

    return answer


def _whatif(api: MessagesAPI, budget_usd: float | None, turns: int = 40) -> WhatIf:
    model = sonnet(api, max_tokens=1_000)
    return WhatIf(
        _session(turns),
        {"ctxlab": CONFIG},
        context_window=8_000,
        counter=ApproximateCounter(),
        summarizer=model,
        budget_usd=budget_usd,
    )


async def test_the_users_model_writes_the_summaries_paid_at_its_usage() -> None:
    usage = {"input_tokens": 2_345, "output_tokens": 321}
    with MessagesAPI(responder=_summary(usage)) as api:
        whatif = _whatif(api, 1.0)
        await whatif.run()
        sent = len(api.requests)
    run = whatif.runs["ctxlab"]
    calls = sum(len(c) for c in run.summary_calls.values())
    assert sent == calls >= 2
    each = (usage["input_tokens"] * SONNET_INPUT + usage["output_tokens"] * SONNET_OUTPUT) / 1e6
    assert whatif.spent == pytest.approx(sent * each, rel=1e-12)
    # The summaries in the replayed requests are the model's, not the offline extract's.
    summaries = [s.state.summary for s in run.prepared if s.state.summary is not None]
    assert summaries and all(MARK in s.text for s in summaries)
    assert run.error is None


async def test_a_whatif_over_its_cap_sends_no_summary_call() -> None:
    with MessagesAPI(responder=_summary({"input_tokens": 100})) as api:
        whatif = _whatif(api, 0.000_01)
        with pytest.raises(OverBudget, match=r"not started: estimated \$0\.0") as refused:
            await whatif.run()
        assert api.requests == []
    assert refused.value.estimate > refused.value.cap == 0.000_01
    assert "budget_usd" in str(refused.value) and "ctxlab" in str(refused.value)


async def test_summary_calls_stop_at_the_cap_and_later_compactions_say_so() -> None:
    # The provider bills far more than the estimate (100,000 input tokens a call: $0.30).
    per_call = 100_000 * SONNET_INPUT / 1e6
    cap = 0.5
    with MessagesAPI(responder=_summary({"input_tokens": 100_000, "output_tokens": 0})) as api:
        whatif = _whatif(api, cap, turns=100)
        await whatif.run()
        sent = len(api.requests)
    assert sent == math.ceil(cap / per_call) == 2
    assert whatif.spent == pytest.approx(sent * per_call)
    records = [s.compaction for s in whatif.runs["ctxlab"].prepared if s.compaction is not None]
    refused = [r for r in records if r.errors]
    assert refused, records
    for record in refused:
        assert all("stopped: budget reached, $0.6000 of $0.5000 spent" in e for e in record.errors)


def test_a_cap_needs_a_summarizer_model() -> None:
    with pytest.raises(UsageError, match="pass summarizer=<your Model> too"):
        WhatIf(_session(3), {"ctxlab": CONFIG}, context_window=8_000, budget_usd=1.0)
    with pytest.raises(UsageError, match="summarizer must be a ctxlab Model"):
        WhatIf(_session(3), {"ctxlab": CONFIG}, context_window=8_000, summarizer="sonnet")  # type: ignore[arg-type]


async def test_replay_takes_the_users_model_under_its_cap() -> None:
    session = _session(40)
    usage = {"input_tokens": 1_000, "output_tokens": 100}
    with MessagesAPI(responder=_summary(usage)) as api:
        model = sonnet(api, max_tokens=500)
        run = replayed(
            session, context_window=8_000, config=CONFIG, summarizer=model, budget_usd=1.0
        )
        steps = [s async for s in run]
        sent = len(api.requests)
        with pytest.raises(OverBudget, match="not started"):
            async for _ in replayed(
                session, context_window=8_000, config=CONFIG, summarizer=model, budget_usd=0.000_01
            ):
                pass
        assert len(api.requests) == sent  # refused: nothing more sent
    compactions = [s.compaction for s in steps if s.compaction is not None]
    assert sent == len(compactions) >= 2
    assert all(MARK in s.state.summary.text for s in steps if s.state.summary is not None)


def test_a_sweep_shares_one_cap_over_its_sessions() -> None:
    per_call = 100_000 * SONNET_INPUT / 1e6
    sessions = [
        dataclasses.replace(_session(40), name=name) for name in ("first", "second", "third")
    ]
    with MessagesAPI(responder=_summary({"input_tokens": 100_000, "output_tokens": 0})) as api:
        model = sonnet(api, max_tokens=500)
        frame = sweep(
            sessions,
            {"ctxlab": CONFIG},
            windows=(8_000,),
            progress=False,
            summarizer=model,
            budget_usd=1.0,
        )
        sent = len(api.requests)
        with pytest.raises(UsageError, match="runs in this process"):
            sweep(sessions, {"ctxlab": CONFIG}, summarizer=model, executor=ThreadPoolExecutor(1))
    # One cap for the sweep: calls stop once $1 is spent ($0.30 each: the fourth reaches it).
    assert sent == math.ceil(1.0 / per_call) == 4
    assert list(frame["session"]) == ["first", "second", "third"]
    # The first session's calls reached the cap ($1.20 spent); the next sessions' estimates,
    # with it, pass the cap: refused before any call, their rows say so.
    errors = list(frame["error"])
    assert errors[0] is None or errors[0] != errors[0]
    assert all(e.startswith("OverBudget: the summaries by claude-sonnet-4-6") for e in errors[1:])
    assert all("$1.2000 already spent" in e for e in errors[1:])
