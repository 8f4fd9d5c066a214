"""The Lab's Fork tab and `ForkLab`, driven from Python: a fork at the selected request under
the configs picked, the branches' curves overlaid with the fork and each run's parting marked,
the outcome table, any run's manifest and context at any request, a static report — what a
tool wrote shown as text."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from ctxlab.demo import DEMO_PROMPT, DEMO_WORKSPACE, demo_agent, demo_config, task_done
from ctxlab.exceptions import ModelError
from ctxlab.fork import fork, run_forward
from ctxlab.models import FunctionModel, MemorylessModel
from ctxlab.widgets import ForkLab, Lab
from tests.fork.helpers import cut_branch

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
async def lab(tmp_path: Path) -> Lab:
    lab = Lab(demo_agent(tmp_path / "origin", model=MemorylessModel()))
    await lab.send(DEMO_PROMPT)
    assert lab.last_error is None
    lab.forks.options.update(workspace=DEMO_WORKSPACE, check=task_done, root=tmp_path / "b")
    return lab


async def test_the_fork_button_forks_at_the_selected_request_and_opens_the_result(
    lab: Lab,
) -> None:
    assert [lab.tabs.get_title(i) for i in range(5)][-1] == "Fork"
    lab.select(2)
    assert lab.forks.button.description == "Fork at request 2"
    lab.forks.configs.value = ("original", "observation_masking")
    lab.forks.runs.value = 2
    task = lab.forks.start()
    assert task is not None and lab.forks.button.disabled
    await task
    forked = lab.forks.result
    assert forked is not None and not lab.forks.button.disabled
    assert lab.forks.view.children == (forked.widget,)
    frame = forked.outcomes.frame()
    assert list(frame["branch"]) == ["original"] * 2 + ["observation_masking"] * 2
    assert set(frame["at"]) == {2} and frame["passed"].all()
    # 2 of 2 passed: the 95 % Wilson interval is 2 / (2 + z²) to 1 (z = 1.959964).
    low = 2 / (2 + 1.959964**2)
    assert f"{low:.2f}" == "0.34"
    assert (
        "passed the check — original 2/2 (95%: 0.34–1.00), observation_masking 2/2 (95%: "
        "0.34–1.00)" in html.unescape(lab.forks.status.value)
    )
    table = html.unescape(forked.table.value)
    assert (
        "observation_masking: 2 of 2 runs with a verdict passed, 1.00 (95% interval 0.34 to "
        "1.00); +0.00 against original (paired by run, 2 pairs: " in table
    )
    assert "±0.10 needs 16 runs at this rate." in table


async def test_the_tab_says_when_no_run_has_a_verdict(lab: Lab) -> None:
    del lab.forks.options["check"]
    lab.select(2)
    lab.forks.configs.value = ("original", "observation_masking")
    lab.forks.runs.value = 2
    forked = await lab.forks.run(raise_errors=False)
    assert forked is not None, lab.forks.status.value
    status = html.unescape(lab.forks.status.value)
    assert "no check was set (lab.forks.options['check']), so no run has a verdict" in status
    assert "passed the check" not in status
    table = html.unescape(forked.table.value)
    for name in ("original", "observation_masking"):
        assert (
            f"{name}: no run has a verdict (no check, or it gave none): no pass rate, no "
            "interval." in table
        )
    frame = forked.outcomes.summary()
    assert list(frame["verdicts"]) == [0, 0] and frame["pass_rate"].isna().all()


async def test_the_tab_gives_the_check_the_time_limit_of_its_options(lab: Lab) -> None:
    async def never(run: object) -> bool:
        await asyncio.sleep(3600)
        return True

    lab.forks.options.update(check=never, check_timeout=0.2)  # a run_forward option
    lab.select(2)
    lab.forks.configs.value = ("original",)
    lab.forks.runs.value = 1
    task = lab.forks.start()
    assert task is not None
    await task
    forked = lab.forks.result
    assert forked is not None, lab.forks.status.value
    (run,) = forked.outcomes.runs
    assert run.passed is None and run.reply is not None
    assert run.notes == [
        "the check gave no verdict within 0.2 s (check_timeout): its verdict is unknown"
    ]


async def test_the_overlay_draws_each_run_the_fork_and_where_contexts_part(
    lab: Lab, tmp_path: Path
) -> None:
    agent = lab.agent
    branches = [
        await fork(agent, at=2, name=n, config=c, workspace=DEMO_WORKSPACE, root=tmp_path / "c")
        for n, c in (("same", None), ("cut", demo_config(tool_result_limit=300)))
    ]
    outcomes = await run_forward(branches, runs=2, check=task_done)
    view = ForkLab(outcomes, original=lab.log.manifests)
    traces = {t["name"]: t for t in view.plot.data}
    assert list(traces["original session"]["y"]) == [
        m.estimated_input_tokens for m in agent.manifests if m.purpose == "reasoning"
    ]
    for run in outcomes.runs:
        curve = traces[html.escape(f"{run.branch.name} · run {run.run}")]
        own = [m for m in run.manifests if m.purpose == "reasoning"]
        assert list(curve["x"]) == list(range(2 + len(own)))
        assert list(curve["y"])[2:] == [m.estimated_input_tokens for m in own]
    # A branch's first run is drawn solid, its other runs dotted (one color per branch).
    dashes = {
        (r.branch.name, r.run): traces[html.escape(f"{r.branch.name} · run {r.run}")]["line"][
            "dash"
        ]
        for r in outcomes.runs
    }
    assert dashes == {
        ("same", 0): "solid",
        ("same", 1): "dot",
        ("cut", 0): "solid",
        ("cut", 1): "dot",
    }
    # The "cut" runs part from "same" at the fork; "same" never does.
    parts = traces["context parts from the reference"]
    assert list(parts["x"]) == [2, 2]
    assert all("cut · run" in t and "at request 2" in t for t in parts["text"])
    assert [s["x0"] for s in view.plot.layout["shapes"]] == [2]
    # The table is the engine's, escaped.
    assert view.table.value == outcomes.table_html()
    assert "<td>same</td>" in view.table.value and "<td>cut</td>" in view.table.value


async def test_any_run_at_any_request_shows_its_manifest_and_context(
    lab: Lab, tmp_path: Path
) -> None:
    branch = await cut_branch(lab.agent, 2, tmp_path / "c")
    outcomes = await run_forward(branch, runs=2, check=task_done)
    view = ForkLab(outcomes)
    view.run.value = 1
    view.step.value = 3  # the branch's second own request: the narrower read
    run = outcomes.runs[1]
    own = [m for m in run.manifests if m.purpose == "reasoning"]
    assert "<b>Request 3</b>" in view.manifest.header.value
    assert html.escape(own[1].request_id) in view.manifest.header.value
    view.tabs.selected_index = 1
    shown = view.context.widget.value
    assert "<b>Request 3</b>" in shown and "ledger/totals.py" in shown
    view.step.value = 0  # before the fork: the session's own request, as it was sent
    assert "<b>Request 0</b>" in view.context.widget.value
    assert "The test suite of the ledger project fails" in view.context.widget.value


async def test_tool_output_is_text_in_every_view_and_the_report(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path / "origin", model=MemorylessModel())
    await agent(DEMO_PROMPT)
    totals = tmp_path / "origin" / "ledger" / "totals.py"
    totals.write_text(totals.read_text() + f"\n# {XSS}\n")  # each copy holds it

    def failing(request: object, info: object) -> str:
        raise ModelError(f"the provider said {XSS}")

    branches = [
        await fork(agent, at=2, name="same", root=tmp_path / "b"),
        await fork(
            agent, at=2, name=XSS, config=demo_config(tool_result_limit=300), root=tmp_path / "b"
        ),
        await fork(
            agent, at=2, name="fails", model=lambda: FunctionModel(failing), root=tmp_path / "b"
        ),
    ]
    outcomes = await run_forward(branches)
    view = ForkLab(outcomes)
    view.step.value = 3  # "same", at its read of totals.py (whole)
    view.tabs.selected_index = 1
    for shown in (view.header.value, view.table.value, view.context.widget.value):
        assert XSS not in shown
    assert html.escape(XSS) in view.context.widget.value
    # Names and hover texts on the plot are escaped too (plotly reads tags in them).
    drawn = " ".join(
        str(t.get(k, "")) for t in view.plot.data for k in ("name", "text", "hovertemplate")
    )
    assert XSS not in drawn and html.escape(XSS) in drawn
    page = view.report(tmp_path / "forks.html").read_text()
    assert XSS not in page and "<script" not in page
    assert f"the provider said {html.escape(XSS)}" in page
    reasoning = sum(m.purpose == "reasoning" for r in outcomes.runs for m in r.manifests)
    assert page.count("<details>") == reasoning + 3 * 2  # every request, the fork's past too
