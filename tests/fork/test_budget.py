"""`run_forward` under a dollar cap, priced from the providers' usage: against a local server
speaking the Messages API and one speaking Chat Completions (each answering from the request it
receives, with `MemorylessModel`'s policy, and reporting the usage the test chose), the cost and
spent columns are the usage at the price table's figures (computed here, from the published
prices), a call whose estimate passes its cap sends no request, and a call that reaches its cap
sends none after it."""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done
from ctxlab.exceptions import OverBudget
from ctxlab.fork import Branch, fork, run_forward
from ctxlab.fork._branch import BranchRun
from ctxlab.models import AnthropicModel, Model, OpenAIModel
from tests.fork.helpers import demo_session
from tests.fork.test_real_models import _anthropic_answer, _openai_answer
from tests.models.chat_api import ChatAPI
from tests.models.messages_api import MessagesAPI

OUTPUT = 512

# The published prices (USD per million tokens), as the price table cites them: Anthropic's
# pricing page for Claude Sonnet 4.6 (input 3, output 15, 5-minute cache write 1.25× input,
# cache read 0.1× input) and OpenAI's for gpt-4o-mini (input 0.15, cached input 0.075,
# output 0.6). Typed here, not read from ctxlab.
SONNET = {"input": 3.0, "write": 3.75, "read": 0.30, "output": 15.0}
MINI = {"input": 0.15, "cached": 0.075, "output": 0.6}


def _anthropic_usage(n: int) -> dict[str, int]:
    """The usage the Messages server reports for its ``n``-th reply (from 0): every field
    differs from reply to reply, cache reads and writes included."""
    return {
        "input_tokens": 700 + 13 * n,
        "output_tokens": 40 + n,
        "cache_read_input_tokens": 1_500 + 100 * n,
        "cache_creation_input_tokens": 220 + 7 * n,
    }


def _anthropic_dollars(usage: dict[str, int]) -> float:
    return (
        usage["input_tokens"] * SONNET["input"]
        + usage["cache_creation_input_tokens"] * SONNET["write"]
        + usage["cache_read_input_tokens"] * SONNET["read"]
        + usage["output_tokens"] * SONNET["output"]
    ) / 1e6


def _openai_usage(n: int) -> dict[str, Any]:
    prompt = 2_000 + 17 * n
    return {
        "prompt_tokens": prompt,
        "completion_tokens": 30 + n,
        "total_tokens": prompt + 30 + n,
        "prompt_tokens_details": {"cached_tokens": 1_024 + 64 * n},
    }


def _openai_dollars(usage: dict[str, Any]) -> float:
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    return (
        (usage["prompt_tokens"] - cached) * MINI["input"]
        + cached * MINI["cached"]
        + usage["completion_tokens"] * MINI["output"]
    ) / 1e6


class Billing:
    """A responder that answers with the policy and reports ``usage(n)`` for its n-th reply,
    keeping each reply's usage (the bills the test prices on its own)."""

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], dict[str, Any]],
        usage: Callable[[int], dict[str, Any]],
    ) -> None:
        self.answer, self.usage = answer, usage
        self.billed: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.answer(body)
        reply["usage"] = self.usage(len(self.billed))
        self.billed.append(reply["usage"])
        return reply


def _anthropic(api: MessagesAPI) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-6", api_key="k", base_url=api.url, max_retries=0, max_tokens=OUTPUT
    )


def _openai(chat: ChatAPI) -> OpenAIModel:
    return OpenAIModel(
        "gpt-4o-mini", base_url=chat.url, api_key="k", max_retries=0, max_tokens=OUTPUT
    )


async def _branches(tmp_path: Path, model: Model, names: tuple[str, ...] = ("a",)) -> list[Branch]:
    session = await demo_session(tmp_path / "origin")
    return [
        await fork(
            session.agent,
            at=1,
            name=name,
            config=demo_config(),
            model=model,
            workspace=DEMO_WORKSPACE,
            root=tmp_path / "b",
        )
        for name in names
    ]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_costs_are_the_replies_usage_at_the_table_prices(tmp_path: Path, kind: str) -> None:
    if kind == "anthropic":
        billing = Billing(_anthropic_answer, _anthropic_usage)
        server: Any = MessagesAPI(responder=billing)
        price_of: Callable[[dict[str, Any]], float] = _anthropic_dollars
    else:
        billing = Billing(_openai_answer, _openai_usage)
        server = ChatAPI([], responder=billing)
        price_of = _openai_dollars
    with server as api:
        model = _anthropic(api) if kind == "anthropic" else _openai(api)
        branches = await _branches(tmp_path, model, ("a", "b"))
        outcomes = await run_forward(
            branches, check=task_done, max_steps=10, budget_usd=5.0, concurrency=1
        )
    frame = outcomes.frame()
    assert len(billing.billed) == frame["steps"].sum() > 0
    expected = math.fsum(price_of(u) for u in billing.billed)
    # Every reply was paid (none from a cache), at its usage: spent and cost are the bills.
    assert frame["spent"].sum() == pytest.approx(expected, rel=1e-9)
    assert frame["cost"].sum() == pytest.approx(expected, rel=1e-9)
    assert outcomes.spent == pytest.approx(expected, rel=1e-9)
    assert set(frame["cost_from"]) == {"usage"}
    assert (frame["from_cache"] == 0).all()
    # The estimate is ctxlab's own model of the same requests, beside it, not the bill.
    assert (frame["cost_estimate"] > 0).all()
    assert not frame["cost_estimate"].equals(frame["cost"])
    # Each run's spent is its own replies' bills, in order.
    per_run = [r.spent for r in outcomes.runs]
    steps = list(frame["steps"])
    first = math.fsum(price_of(u) for u in billing.billed[: steps[0]])
    assert per_run[0] == pytest.approx(first, rel=1e-9)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_call_over_its_cap_is_refused_before_any_request(tmp_path: Path, kind: str) -> None:
    with (
        MessagesAPI(responder=Billing(_anthropic_answer, _anthropic_usage))
        if kind == "anthropic"
        else ChatAPI([], responder=Billing(_openai_answer, _openai_usage))
    ) as api:
        model = _anthropic(api) if kind == "anthropic" else _openai(api)  # type: ignore[arg-type]
        branches = await _branches(tmp_path, model)
        with pytest.raises(OverBudget) as refused:
            await run_forward(branches, runs=3, max_steps=20, budget_usd=0.0001)
        assert api.requests == []
    error = refused.value
    assert error.cap == 0.0001
    assert error.estimate > error.cap
    said = str(error)
    assert "$0.00" in said and "max_steps" in said and "budget_usd" in said and "fewer runs" in said
    # The estimate is made as the docs say: per run, max_steps requests of the largest
    # request before the fork as fresh input plus an output, at the model's price.
    assert f"{error.estimate:,.4f}" in said


HEAVY = {"input_tokens": 100_000, "output_tokens": 0}
"""A provider that bills far more than ctxlab counts (an unseen system prompt): $0.30 a request
at Sonnet's input price, well past the estimate, so the cap is reached while the runs go on."""


async def test_a_run_stops_at_the_cap_and_no_request_follows(tmp_path: Path) -> None:
    per_request = HEAVY["input_tokens"] * SONNET["input"] / 1e6
    cap = 1.0
    judged: list[BranchRun] = []

    def check(run: BranchRun) -> bool:
        judged.append(run)
        return task_done(run)

    with MessagesAPI(responder=Billing(_anthropic_answer, lambda n: dict(HEAVY))) as api:
        branches = await _branches(tmp_path, _anthropic(api))
        outcomes = await run_forward(
            branches, runs=3, max_steps=10, concurrency=1, check=check, budget_usd=cap
        )
        sent = len(api.requests)
    # Checked before each request: requests go on while less than the cap was spent.
    assert sent == math.ceil(cap / per_request) == 4
    assert cap <= outcomes.spent <= cap + per_request
    assert outcomes.spent == pytest.approx(sent * per_request)
    frame = outcomes.frame()
    stopped = frame.iloc[0]
    assert stopped["error"] == "stopped: budget reached, $1.2000 of $1.0000 spent"
    assert frame["passed"].isna().all()
    assert judged == []  # a run stopped at the cap is not judged: its outcome is unknown
    for later in frame.iloc[1:].itertuples():
        assert later.error == "not run: budget reached, $1.2000 of $1.0000 spent"
        assert later.spent == 0.0
    assert list(frame["spent"]) == pytest.approx([sent * per_request, 0.0, 0.0])
    assert "spent $1.2000" in outcomes.spending and "cap of $1.0000" in outcomes.spending


async def test_on_an_executor_each_run_has_its_share_of_the_cap(tmp_path: Path) -> None:
    per_request = HEAVY["input_tokens"] * SONNET["input"] / 1e6
    with MessagesAPI(responder=Billing(_anthropic_answer, lambda n: dict(HEAVY))) as api:
        branches = await _branches(tmp_path, _anthropic(api))
        with ThreadPoolExecutor(2) as pool:
            outcomes = await run_forward(
                branches, runs=2, max_steps=10, executor=pool, budget_usd=1.0
            )
        sent = len(api.requests)
    # Each task may spend 0.5: two requests each (0.3, then 0.6 ≥ 0.5 stops the third).
    assert sent == 2 * math.ceil(0.5 / per_request) == 4
    frame = outcomes.frame()
    assert list(frame["spent"]) == pytest.approx([2 * per_request] * 2)
    assert all(e.startswith("stopped: budget reached, $0.6000 of $0.5000") for e in frame["error"])


async def test_the_progress_bar_shows_runs_and_dollars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with MessagesAPI(responder=Billing(_anthropic_answer, _anthropic_usage)) as api:
        branches = await _branches(tmp_path, _anthropic(api))
        outcomes = await run_forward(branches, runs=2, max_steps=10, progress=True, budget_usd=5)
    err = capsys.readouterr().err
    assert "2/2" in err
    assert f"spent ${outcomes.spent:,.4f} of $5.0000" in err
    assert f"estimate ${outcomes.estimate.total:,.2f}" in err  # type: ignore[union-attr]
