"""The offline demo: DemoModel on the sample project, its workspace tools, ``python -m ctxlab``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlab.agent import Agent
from ctxlab.demo import DEMO_PROMPT, demo_agent, prepare_workspace, workspace_tools
from ctxlab.models import DemoModel


async def test_demo_session_fixes_the_bug_with_real_tool_runs(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path / "ws")
    events = [e async for e in agent.stream_events(DEMO_PROMPT)]
    calls = [e.tool_use.name for e in events if e.type == "tool_call"]
    for name in ("list_files", "read_file", "grep", "run_tests", "edit_file"):
        assert name in calls
    runs = [
        e.result.text for e in events if e.type == "tool_result" and e.tool_use.name == "run_tests"
    ]
    assert runs[0].startswith("exit status 1:") and "FAILED (failures=4)" in runs[0]
    assert runs[-1].startswith("exit status 0:") and ", OK" in runs[-1].splitlines()[0]
    source = (tmp_path / "ws" / "ledger" / "totals.py").read_text()
    assert "/ 100)" in source and "/ 10)" not in source
    # The context engine had work to do: truncation, an offload to the workspace, a compaction.
    codes = {t.kind for m in agent.manifests for t in m.transforms}
    assert {"tool_result_truncation", "tool_result_offload", "history_compaction"} <= codes
    assert [e.kind for e in events if e.type == "compaction"] == ["automatic"]
    assert list((tmp_path / "ws" / "large_tool_results").iterdir())
    reply = events[-1]
    assert reply.type == "reply" and "After: 92 tests, OK." in reply.text
    assert all(m.validation == "passed" for m in agent.manifests)


async def test_demo_model_explains_itself_without_its_tools() -> None:
    reply = await Agent(model=DemoModel())("hello")
    assert "demo_agent()" in reply.content[0].text  # type: ignore[union-attr]


async def test_demo_model_answers_questions_about_the_project(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path)
    reply = await agent("What is this project?")
    assert "invoicing library" in reply.content[0].text  # type: ignore[union-attr]


def test_workspace_tools_stay_inside_the_workspace(tmp_path: Path) -> None:
    root = prepare_workspace(tmp_path / "ws")
    (tmp_path / "secret.txt").write_text("top secret")
    tools = {t.name: t for t in workspace_tools(root)}

    async def run(name: str, **arguments: object) -> str:
        result = await tools[name].run("t1", arguments)
        return ("ERROR " if result.is_error else "") + result.text

    import asyncio

    assert asyncio.run(run("read_file", path="../secret.txt")).startswith("ERROR")
    assert "outside the workspace" in asyncio.run(run("grep", pattern="secret", path="/"))
    assert "outside the workspace" in asyncio.run(run("list_files", path=".."))
    edit = asyncio.run(run("edit_file", path="ledger/totals.py", old="return", new="yield"))
    assert edit.startswith("ERROR") and "occurs" in edit
    assert "yield" not in (root / "ledger" / "totals.py").read_text()


def test_prepare_workspace_refuses_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a demo workspace"):
        prepare_workspace(tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_a_users_own_ledger_project_is_never_overwritten(tmp_path: Path) -> None:
    # A folder that happens to hold a ledger/ of its own is the user's, not a demo workspace.
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "money.py").write_text("MY CODE")
    (tmp_path / "README.md").write_text("my readme")
    with pytest.raises(FileExistsError, match=r"would overwrite README\.md"):
        prepare_workspace(tmp_path)
    assert (tmp_path / "ledger" / "money.py").read_text() == "MY CODE"
    assert (tmp_path / "README.md").read_text() == "my readme"
    # A workspace the demo made is reused.
    made = prepare_workspace(tmp_path / "ws")
    assert prepare_workspace(made) == made


def test_the_demo_cli_says_what_is_wrong_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    for argv, said in [
        (["demo", "--workspace", str(tmp_path)], "not a demo workspace"),
        (["demo", "--workspace", str(tmp_path / "notes.txt")], "is a file"),
        (["demo", "--window", "0"], "--window must be a positive"),
        (["demo", "--window", "-5"], "--window must be a positive"),
    ]:
        completed = subprocess.run(
            [sys.executable, "-m", "ctxlab", *argv], capture_output=True, text=True, check=False
        )
        assert completed.returncode == 2, argv
        assert said in completed.stderr and "Traceback" not in completed.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_python_m_ctxlab_demo_runs_headless_under_a_minute(tmp_path: Path) -> None:
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "ctxlab", "demo", "--workspace", str(tmp_path / "ws")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    seconds = time.perf_counter() - start
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "tool_result_offload" in out
    assert "[automatic" in out and "history_compaction" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("req"))
    for column in ("system", "tools", "convers", "transie", "referen", "transforms"):
        assert column in header
    lines = out.splitlines()
    rows = [
        r
        for r in lines[lines.index(header) + 1 :]
        if r.split() and r.split()[1] in ("reasoning", "summary", "recovery")
    ]
    # Reasoning requests numbered from 0 as in the Lab; summary requests are not numbered.
    numbers = [r.split()[0] for r in rows if r.split()[1] != "summary"]
    assert numbers == [str(n) for n in range(len(numbers))]
    assert all(r.split()[0] == "·" for r in rows if r.split()[1] == "summary")
    assert any(r.split()[1] == "summary" for r in rows)
    assert f"\n{len(numbers)} requests (" in out
    assert "After: 92 tests, OK." in out
    assert seconds < 30  # about a second here; the subprocess timeout is 60
