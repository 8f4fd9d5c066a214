"""`run_forward` under a dollar cap, priced from the providers' usage: against a local server
speaking the Messages API and one speaking Chat Completions (each answering from the request it
receives, with `MemorylessModel`'s policy, and reporting the usage the test chose), the cost and
spent columns are the usage at the price table's figures (computed here, from the published
prices), a call whose estimate passes its cap sends no request, and a call that reaches its cap
sends none after it."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab.analysis._budget import Budget, Charge, checked_budget
from ctxlab.analysis._prices import price_for
from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done
from ctxlab.exceptions import BudgetReached, ForkError, OverBudget, UsageError
from ctxlab.fork import Branch, RecordedModel, fork, forward_estimate, run_forward
from ctxlab.fork._branch import BranchRun
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import (
    AnthropicModel,
    MemorylessModel,
    Model,
    ModelResponse,
    OpenAIModel,
    ResponseCache,
    ScriptedModel,
    tool_call,
)
from tests.fork.helpers import demo_session
from tests.fork.test_real_models import _anthropic_answer, _openai_answer
from tests.fork.test_replay import _CUT, _generated, _read_tool
from tests.models.chat_api import ChatAPI
from tests.models.messages_api import MessagesAPI, sonnet

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
    return sonnet(api, max_tokens=OUTPUT)


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


class _Cached(MemorylessModel):
    """`MemorylessModel` whose every reply says it came from a response cache."""

    def branch(self) -> _Cached:
        return _Cached()

    async def request(self, request: ModelRequest, **kwargs: Any) -> ModelResponse:
        return dataclasses.replace(await super().request(request, **kwargs), from_cache=True)


async def test_replies_from_the_response_cache_are_billed_but_cost_nothing_spent(
    tmp_path: Path,
) -> None:
    session = await demo_session(tmp_path / "origin")
    branch = await fork(
        session.agent, at=1, model=_Cached(), workspace=DEMO_WORKSPACE, root=tmp_path / "b"
    )
    outcomes = await run_forward(
        branch, runs=2, max_steps=12, price=price_for("claude-sonnet-4-6"), budget_usd=1.0
    )
    frame = outcomes.frame()
    assert frame["error"].isna().all()
    assert list(frame["spent"]) == [0.0, 0.0] and outcomes.spent == 0.0
    assert list(frame["from_cache"]) == list(frame["steps"])
    # Their bills stay in cost: each request's usage at Sonnet's prices.
    for run, cost in zip(outcomes.runs, frame["cost"], strict=True):
        usages = [m.provider_usage for m in run.manifests]
        assert all(u is not None for u in usages)
        expected = math.fsum(
            (u.input_tokens * SONNET["input"] + u.output_tokens * SONNET["output"]) / 1e6
            for u in usages
            if u is not None
        )
        assert cost == pytest.approx(expected, rel=1e-12) and cost > 0
    assert "from the response cache, at $0" in outcomes.spending


def test_a_budget_charges_each_reply_by_its_usage() -> None:
    budget = Budget(0.01)
    request = ModelRequest(system="s", messages=(UserMessage(content="hi"),), tools=())
    reply = AssistantMessage(content="hello")
    counter = MemorylessModel().counter

    def charge(
        branch: str, response: ModelResponse, purpose: str = "reasoning", model: str = "x"
    ) -> Charge:
        # The request and counter are the same for every reply charged here.
        return budget.charge(
            branch, response, purpose, model=model, request=request, counter=counter
        )

    usage = ProviderUsage(
        input_tokens=1_000,
        output_tokens=100,
        cache_read_input_tokens=2_000,
        cache_creation_input_tokens=400,
        cache_creation_1h_input_tokens=100,
    )
    paid = charge("a#0", ModelResponse(reply, usage=usage, model="claude-sonnet-4-6"))
    # 1h writes at 2× input (6.00), the other 300 writes at 1.25× (3.75).
    expected = (1_000 * 3 + 300 * 3.75 + 100 * 6.0 + 2_000 * 0.3 + 100 * 15) / 1e6
    assert paid.spent == pytest.approx(expected) and budget.spent == pytest.approx(expected)
    assert not budget.reached
    # No usage: ctxlab's count of the request and answer, never $0.
    counted = charge("a#0", ModelResponse(reply, model="claude-sonnet-4-6"), "summary")
    assert counted.estimated and counted.spent > 0
    assert budget.spent_by("a#0") == pytest.approx(expected + counted.spent)
    # A reply no price is known for: the spending is unknown, the cap cannot be kept.
    charge("a#1", ModelResponse(reply, usage=usage, model="mystery-model"), model="mystery-model")
    assert math.isnan(budget.spent) and budget.reached
    with pytest.raises(BudgetReached, match=r"stopped: budget reached, \$unknown of \$0.0100"):
        budget.check()


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "5", 10**7])
def test_a_cap_that_is_no_dollar_figure_is_refused(bad: object) -> None:
    with pytest.raises(UsageError, match="budget_usd must be a number of dollars"):
        checked_budget(bad)


async def test_the_estimate_is_runs_times_max_steps_requests(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "origin")
    branch = await fork(session.agent, at=3, workspace=DEMO_WORKSPACE, root=tmp_path / "b")
    price = price_for("claude-sonnet-4-6")
    one = forward_estimate(branch, runs=1, max_steps=1, price=price)
    (first,) = one.branches
    # One request: the largest request before the fork, fresh, and the largest output.
    before = [m for m in branch.point.manifests if m.purpose == "reasoning"]
    tokens = max(m.estimated_input_tokens for m in before)
    assert first.input_tokens >= tokens
    outputs = [m.provider_usage.output_tokens for m in before if m.provider_usage]
    assert first.output_tokens == max(outputs)
    assert first.per_request == pytest.approx(
        (first.input_tokens * 3.0 + first.output_tokens * 15.0) / 1e6
    )
    many = forward_estimate(branch, runs=4, max_steps=7, price=price)
    assert many.total == pytest.approx(28 * first.per_request)
    with pytest.raises(ForkError, match="max_steps"):
        forward_estimate(branch, max_steps=0)


_IMPORTS = """
import asyncio, sys, tempfile
from pathlib import Path
from ctxlab.demo import DEMO_WORKSPACE
from ctxlab.fork import fork, run_forward
from tests.fork.helpers import demo_session
from tests.fork.test_replay import _CUT, _generated, _read_tool

async def main(progress):
    root = Path(tempfile.mkdtemp())
    session = await demo_session(root / "origin")
    branch = await fork(session.agent, at=3, workspace=DEMO_WORKSPACE, root=root / "b")
    await run_forward(branch, max_steps=12, progress=progress)

asyncio.run(main(sys.argv[1] == "bar"))
print(sorted(m for m in ("tqdm", "ipywidgets", "IPython") if m in sys.modules))
"""


@pytest.mark.parametrize(("progress", "imported"), [("none", "[]"), ("bar", "['tqdm']")])
def test_the_bar_imports_tqdm_only_when_asked_and_never_ipywidgets(
    progress: str, imported: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS, progress],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == imported


class _Heavy(MemorylessModel):
    """`MemorylessModel` billed 100,000 input tokens a reply (its summaries stay offline)."""

    def branch(self) -> _Heavy:
        return _Heavy(context_window=self.context_window)

    async def request(self, request: ModelRequest, **kwargs: Any) -> ModelResponse:
        response = await super().request(request, **kwargs)
        return dataclasses.replace(response, usage=ProviderUsage(100_000, 0))


async def test_a_compaction_refused_at_the_cap_stops_its_run_unjudged(tmp_path: Path) -> None:
    # The cap is reached after two replies; the compaction that comes next cannot summarize
    # (its call refused) and may not fall back: the run stops there, said as the cap's doing.
    session = await demo_session(tmp_path / "origin")
    branch = await fork(
        session.agent,
        at=1,
        model=_Heavy(context_window=8_000),
        config=demo_config(trigger_ratio=0.5, compression_fallback_to_truncation=False),
        workspace=DEMO_WORKSPACE,
        root=tmp_path / "b",
    )
    judged: list[BranchRun] = []
    outcomes = await run_forward(
        branch,
        max_steps=4,
        budget_usd=0.5,
        price=price_for("claude-sonnet-4-6"),
        check=lambda run: judged.append(run) or True,
    )
    row = outcomes.frame().iloc[0]
    assert row["error"] == "stopped: budget reached, $0.6000 of $0.5000 spent"
    assert row["passed"] is pd.NA and judged == []
    purposes = [m.purpose for m in outcomes.runs[0].manifests]
    assert purposes[:3] == ["reasoning", "reasoning", "summary"]


async def test_a_recordings_own_replies_cost_nothing_spent_its_handover_is_paid(
    tmp_path: Path,
) -> None:
    recording = _generated([50, 4_000, 50])
    replies = [
        ModelResponse(
            AssistantMessage(content=(tool_call("write", {"path": "out.txt", "text": "mine"}),)),
            stop_reason="tool_use",
            usage=ProviderUsage(1_000, 100),
            model="claude-sonnet-4-6",
        ),
        ModelResponse(
            AssistantMessage(content="Done."),
            usage=ProviderUsage(2_000, 50, cache_read_input_tokens=900),
            model="claude-sonnet-4-6",
        ),
    ]
    branch = await fork(
        recording,
        at=0,
        config=_CUT,
        model=RecordedModel(recording, then=ScriptedModel(replies)),
        tools=_read_tool([]),
        root=tmp_path,
    )
    outcomes = await run_forward(
        branch, max_steps=20, price=price_for("claude-sonnet-4-6"), budget_usd=2.0
    )
    (run,) = outcomes.runs
    assert run.reply == "Done." and len(run.requests) == 4  # two replayed, two handed over
    # Only the model handed over to is paid: its two replies, at Sonnet's prices.
    paid = (1_000 * SONNET["input"] + 100 * SONNET["output"]) / 1e6 + (
        2_000 * SONNET["input"] + 900 * SONNET["read"] + 50 * SONNET["output"]
    ) / 1e6
    assert run.spent == pytest.approx(paid, rel=1e-12)
    # The estimate prices the model it hands over to; a replay alone is estimated $0.
    alone = await fork(recording, at=0, name="alone", model="recorded", root=tmp_path / "r")
    assert forward_estimate(alone, runs=5).total == 0.0


async def test_a_response_cache_keeps_each_run_apart_and_replays_them_at_no_cost(
    tmp_path: Path,
) -> None:
    # Two runs of one branch send the same first requests (a deterministic policy): unscoped, a
    # cache would answer run 1 with run 0's replies. Scoped by branch and run, each run asks
    # the server; forked again (a notebook run again), every request is a hit and nothing is spent.
    billing = Billing(_anthropic_answer, _anthropic_usage)
    with MessagesAPI(responder=billing) as api:
        session = await demo_session(tmp_path / "origin")

        async def once(root: str) -> Any:
            model = sonnet(api, max_tokens=OUTPUT, cache=ResponseCache(tmp_path / "cache"))
            branch = await fork(
                session.agent,
                at=1,
                name="a",
                config=demo_config(),
                model=model,
                workspace=DEMO_WORKSPACE,
                root=tmp_path / root,
            )
            return await run_forward(branch, runs=2, check=task_done, max_steps=10)

        first = (await once("b1")).frame()
        asked = len(api.requests)
        again = (await once("b2")).frame()
    assert first["steps"].tolist() == again["steps"].tolist() and first["steps"].min() > 0
    assert asked == first["steps"].sum() == len(billing.billed)
    assert (first["from_cache"] == 0).all()
    assert len(api.requests) == asked  # the second time, no request reached the server
    assert (again["from_cache"] == again["steps"]).all()
    assert again["spent"].sum() == 0
    assert again["cost"].sum() == pytest.approx(first["cost"].sum(), rel=1e-9)
    assert again["passed"].tolist() == first["passed"].tolist()
