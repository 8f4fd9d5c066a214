"""The demo's workspace tools for a fork: each remade over another folder acts there and only
there; their test runs print no clock (two identical runs give identical output)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ctxlab.demo import prepare_workspace, workspace_tools


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def test_each_tool_remade_for_another_folder_acts_there_only(tmp_path: Path) -> None:
    original = prepare_workspace(tmp_path / "original")
    copy = prepare_workspace(tmp_path / "copy")
    before = _tree(original)
    tools = workspace_tools(original)
    moved = {t.name: t.for_workspace(copy) for t in tools if t.for_workspace is not None}
    assert sorted(moved) == sorted(t.name for t in tools)
    assert all(moved[t.name].schema == t.schema for t in tools)
    line = "discount = round_half_up(Decimal(amount_cents * percent) / 10)"
    edited = await moved["edit_file"].run(
        "e1", {"path": "ledger/totals.py", "old": line, "new": line.replace("/ 10)", "/ 100)")}
    )
    assert not edited.is_error, edited.text
    assert "/ 100)" in (copy / "ledger" / "totals.py").read_text().split("def add_tax")[0]
    passed = await moved["run_tests"].run("t1", {})
    assert passed.text.startswith("exit status 0: Ran 92 tests, OK"), passed.text[:200]
    assert _tree(original) == before


async def test_a_test_run_prints_no_duration(tmp_path: Path) -> None:
    root = prepare_workspace(tmp_path)
    (run_tests,) = [t for t in workspace_tools(root) if t.name == "run_tests"]
    one, two = await run_tests.run("a", {}), await run_tests.run("a", {})
    assert one.text == two.text
    assert "\nRan 92 tests\n" in one.text
