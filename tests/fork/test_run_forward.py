"""`run_forward`'s own promises, on the demo session: the prompt sent first, a reply of several
text blocks joined by lines, the seconds a run took, the price and cache rules passed to the
table, the documented defaults, its arguments refused by name; on a standard-library executor
(the path Dask takes, without a cluster): the figures of this process, each run in a folder of
its own, numbered after the runs made here."""

from __future__ import annotations

import inspect
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ctxlab.analysis._cost import CacheRules
from ctxlab.analysis._prices import Price, price_for
from ctxlab.demo import DEMO_WORKSPACE, demo_config, prepare_workspace
from ctxlab.exceptions import ForkError, UsageError
from ctxlab.fork import Outcomes, Workspace, fork, run_forward
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.models import FunctionModel
from tests.fork.helpers import check_tests, demo_session


def _user_texts(request: Any) -> list[str]:
    return [
        m.content
        if isinstance(m.content, str)
        else "".join(getattr(b, "text", "") for b in m.content)
        for m in request.messages
        if isinstance(m, UserMessage)
    ]


async def test_the_prompt_is_sent_first_and_a_reply_read_whole(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)

    def replies(request: Any, info: Any) -> AssistantMessage:
        return AssistantMessage(content=(TextBlock(text="All done."), TextBlock(text="Bye.")))

    branch = await fork(
        session.agent,
        at=6,
        model=lambda: FunctionModel(replies, context_window=8_000),
        root=tmp_path / "b",
    )
    outcomes = await run_forward(branch, prompt="Say goodbye.")
    run = outcomes.runs[0]
    first = run.requests[0]
    assert first is not None
    assert "Say goodbye." in _user_texts(first)
    assert not any("Say goodbye." in _user_texts(r) for r in session.sent)  # control
    assert run.reply == "All done.\nBye."
    assert 0 <= run.seconds < 120 and outcomes.row(run)["seconds"] == round(run.seconds, 3)


async def test_the_price_and_cache_rules_reach_the_table(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=2, workspace=DEMO_WORKSPACE, root=tmp_path / "b")
    price = Price(input=30.0, output=150.0, cache_write=37.5, cache_read=3.0)
    rules = CacheRules("none")
    priced = await run_forward(branch, price=price, rules=rules, max_steps=12)
    run = priced.runs[0]
    assert priced.row(run)["cost"] == pytest.approx(
        Outcomes([run], branch.name, price=price, rules=rules).row(run)["cost"]
    )
    # Controls: the branch's model has no price of its own (unpriced: NaN, never another model's
    # dollars), and the price without the rules costs otherwise.
    own = Outcomes([run], branch.name)
    assert math.isnan(own.row(run)["cost"])
    assert own.pricing == ["unpriced (model 'ctxlab-memoryless' has no known price)"]
    assert (
        "cost: unpriced (model &#x27;ctxlab-memoryless&#x27; has no known price)"
        in own.table_html()
    )
    assert priced.pricing == [
        "a price you passed: $30 input, $150 output, cache read $3, cache write $37.50 per "
        "million tokens; no prompt cache (every input token at the input price)"
    ]
    # A price passed for a model of no known provider: no cache assumed (said in the note);
    # Anthropic's rules with it cost otherwise.
    assert Outcomes([run], branch.name, price=price).row(run)["cost"] == pytest.approx(
        priced.row(run)["cost"]
    )
    # The rules shape the estimate; the cost is the replies' usage, which no rule changes.
    anthropic = Outcomes([run], branch.name, price=price, rules=CacheRules.anthropic())
    assert anthropic.row(run)["cost_estimate"] != pytest.approx(priced.row(run)["cost_estimate"])
    assert anthropic.row(run)["cost"] == pytest.approx(priced.row(run)["cost"])
    with pytest.raises(UsageError, match="price must be a Price"):
        await run_forward(branch, price="cheap")  # type: ignore[arg-type]


def test_the_documented_defaults() -> None:
    # docs/concepts/forks.md: run_forward(branches, prompt=None, max_steps=30, check=None,
    # check_timeout=600, runs=1, concurrency=4, executor=None) — a progress bar only when asked.
    defaults = {
        name: p.default
        for name, p in inspect.signature(run_forward).parameters.items()
        if p.default is not p.empty
    }
    assert defaults == {
        "prompt": None,
        "max_steps": 30,
        "check": None,
        "check_timeout": 600.0,
        "runs": 1,
        "concurrency": 4,
        "executor": None,
        "reference": None,
        "price": None,
        "rules": None,
        "progress": False,
        "budget_usd": None,
    }


async def test_arguments_refused_by_name(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=2, root=tmp_path / "b")
    end = await fork(session.agent, at=6, name="end", root=tmp_path / "c")
    for given, says in (
        ({"max_steps": 0}, "max_steps must be a whole number from 1 to 100,000, got 0"),
        ({"max_steps": 10**400}, "max_steps must be a whole number from 1 to 100,000, got"),
        ({"budget_usd": 10**400}, "budget_usd must be a number of dollars above 0"),
        ({"budget_usd": -1}, "budget_usd must be a number of dollars above 0"),
        ({"concurrency": True}, "concurrency must be a whole number from 1 to 64, got True"),
        ({"runs": 2.0}, "runs must be a whole number from 1 to 1,000, got 2.0"),
    ):
        with pytest.raises(UsageError, match=says):
            await run_forward(branch, **given)  # type: ignore[arg-type]
    with pytest.raises(ForkError, match=r"^run_forward takes branches made by ctxlab\.fork \(at"):
        await run_forward([])
    with pytest.raises(
        ForkError, match=r"nothing to continue\. Give run_forward a prompt=\.\.\., or fork at an"
    ):
        await run_forward(end)


async def test_on_an_executor_the_runs_are_those_of_this_process(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    branches = [
        await fork(
            session.agent, at=2, name=name, config=config, workspace=DEMO_WORKSPACE, root=tmp_path
        )
        for name, config in (("same", None), ("cut", demo_config(tool_result_limit=300)))
    ]
    sonnet = price_for("claude-sonnet-4-6")  # the demo model has no price of its own
    here = await run_forward(branches, check=check_tests, max_steps=8, price=sonnet)
    with ThreadPoolExecutor(2) as pool:
        there = await run_forward(
            branches,
            runs=2,
            check=check_tests,
            max_steps=8,
            executor=pool,
            reference="cut",
            price=sonnet,
        )
        # Again: the runs are numbered on, each in a new folder of its own.
        more = await run_forward(branches[0], runs=2, max_steps=8, executor=pool)
        assert [r.run for r in more.runs] == [3, 4]
        assert more.frame()["error"].isna().all() and list(more.frame()["steps"]) == [4, 4]
        # A run whose folder cannot be made on the worker is a row with its error.
        filled: list[Path] = []

        def _fails_after_one(folder: Path) -> None:
            filled.append(folder)  # run 0 (made by fork) gets the project, no later run
            if len(filled) > 1:
                msg = "disk full"
                raise OSError(msg)
            prepare_workspace(folder)

        broken = await fork(
            session.agent, at=2, name="broken", workspace=Workspace(_fails_after_one), root=tmp_path
        )
        lost = await run_forward(broken, runs=2, executor=pool)
        assert [(r.branch, r.run, r.error) for r in lost.runs] == [
            (
                broken,
                1,
                "ForkError: could not fill a branch's workspace with _fails_after_one: OSError: disk full",
            ),
            (
                broken,
                2,
                "ForkError: could not fill a branch's workspace with _fails_after_one: OSError: disk full",
            ),
        ]
    assert there.reference == "cut"
    local = here.frame().set_index("branch")
    remote = there.frame()
    assert list(remote["branch"]) == ["same", "same", "cut", "cut"]
    assert list(remote["run"]) == [1, 2, 1, 2]  # after run 0, made by fork here
    for _, row in remote.iterrows():
        mine = local.loc[row["branch"]]
        for column in ("steps", "requests", "compactions", "reply", "passed"):
            assert row[column] == mine[column], column
        # A folder's path tokenizes a token or two otherwise: the same figures, within 1 %.
        assert abs(row["tokens"] - mine["tokens"]) <= 0.01 * mine["tokens"]
        assert row["cost"] == pytest.approx(mine["cost"], rel=0.01)
    # Compared with "cut": its runs never part from it, the others' do where "cut" cut.
    assert list(remote["diverges_at"].isna()) == [False, False, True, True]
    assert all(
        r.agent is None and r.branch is b
        for r, b in zip(there.runs, [*[branches[0]] * 2, *[branches[1]] * 2], strict=True)
    )
    folders = {r.workspace for r in there.runs}
    assert len(folders) == 4 and not folders & {r.workspace for r in here.runs}
    assert all(
        f is not None and f.parent.name == f"run-{r.run}"
        for r, f in zip(there.runs, [r.workspace for r in there.runs], strict=True)
    )
