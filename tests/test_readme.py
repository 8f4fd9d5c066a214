"""The README's Python snippets run as written (offline: a demo or scripted model stands in where
a snippet names Claude or reads a file the reader would bring)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def snippets() -> dict[str, str]:
    """The first ```python block under each heading."""
    found: dict[str, str] = {}
    heading = ""
    for part in re.split(r"(^#+ .*$)", README.read_text(encoding="utf-8"), flags=re.M):
        if part.startswith("#"):
            heading = part.lstrip("# ").strip()
            continue
        blocks = re.findall(r"```python\n(.*?)```", part, flags=re.S)
        if blocks:
            found[heading] = blocks[0]
    return found


async def run(code: str, namespace: dict[str, Any]) -> dict[str, Any]:
    compiled = compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, namespace)  # the README's own code
    if result is not None:
        await result
    return namespace


async def test_the_lab_and_agent_snippets_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ipywidgets")
    monkeypatch.chdir(tmp_path)
    blocks = snippets()
    lab = await run(blocks["The Lab: watch and steer an agent in a notebook"], {})
    assert len(lab["lab"].steps) > 5 and lab["lab"].last_error is None
    five = await run(blocks["An agent in five lines"], {})
    assert "92 tests, OK" in "".join(getattr(b, "text", "") for b in five["reply"].content)


async def test_the_sources_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    done = await run(snippets()["Sources, task state, the session log"], {})  # as written
    agent = done["agent"]
    assert set(agent.sources) == {"change-record", "notes"}
    assert len(done["agent"].log.search("export")) == 0  # a fresh log: nothing said yet


async def test_the_replay_and_prepare_snippets_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab.demo import DEMO_PROMPT, demo_agent
    from ctxlab.models import messages_to_anthropic

    monkeypatch.chdir(tmp_path)
    agent = demo_agent(tmp_path / "ws")
    await agent(DEMO_PROMPT)
    lines = [{"type": "meta", "system": agent.system_prompt}]
    lines += messages_to_anthropic(agent.history)  # type: ignore[arg-type]
    Path("session.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    blocks = snippets()
    replayed = await run(blocks["Replay under other settings"], {})
    assert set(replayed["frame"]["config"]) == {"default", "eager"}
    prepared = await run(
        blocks["What it is"].replace("asyncio.run(prepare(", "(await prepare("), {}
    )
    assert prepared["prep"].manifest.validation == "passed"


async def test_the_other_framework_snippet_runs() -> None:
    pytest.importorskip("ipywidgets")
    pytest.importorskip("pydantic_ai")
    done = await run(snippets()["Watch an agent of another framework"], {})
    session, lab = done["session"], done["lab"]
    assert len(session.manifests) == 1
    assert len(lab.steps) == 1 and lab.steps["validation"].tolist() == ["passed"]


async def test_the_what_if_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    monkeypatch.chdir(tmp_path)
    agent = demo_agent(tmp_path / "ws")
    await agent(DEMO_PROMPT)
    agent.transcript().save(tmp_path / "session.jsonl")
    done = await run(snippets()["Tune compaction: what-if, cost and retention"], {})
    table = done["lab"].what.table()
    assert list(table.index) == ["ctxlab", "agentscope", "observation_masking"]
    assert (table["errors"] == 0).all()


async def test_the_sweep_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    monkeypatch.chdir(tmp_path)
    agent = demo_agent(tmp_path / "ws")
    await agent(DEMO_PROMPT)
    agent.transcript().save(tmp_path / "session.jsonl")
    done = await run(snippets()["Sweeps: many sessions × many configs, on Dask"], {})
    from ctxlab import PRESETS

    assert len(done["frame"]) == len(PRESETS) * 2 and done["frame"]["error"].isna().all()


async def test_the_fork_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = await run(
        snippets()["Fork a session: does the agent still finish under another config?"], {}
    )
    table = done["outcomes"].summary().set_index("branch")
    # What the README says of it: the control in four requests, the cut in five, eager never.
    assert list(table["passed"]) == [3, 3, 0]
    assert list(table["steps"])[:2] == [4, 5]
    assert list(table["errors"]) == [0, 0, 3]


TESTED = {
    "Fork a session: does the agent still finish under another config?",
    "The Lab: watch and steer an agent in a notebook",
    "An agent in five lines",
    "Sources, task state, the session log",
    "Replay under other settings",
    "What it is",
    "Watch an agent of another framework",
    "Tune compaction: what-if, cost and retention",
    "Sweeps: many sessions × many configs, on Dask",
}


def test_every_python_block_runs_in_a_test_or_says_why_not() -> None:
    heading, first_under_heading = "", True
    untested: list[str] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.startswith("#"):
            heading, first_under_heading = line.lstrip("# ").strip(), True
        elif line.startswith("```python"):
            marked = number > 0 and lines[number - 1].startswith("<!-- illustrative:")
            if not marked and not (first_under_heading and heading in TESTED):
                untested.append(f"line {number + 1} under {heading!r}")
            first_under_heading = False
    assert untested == []
