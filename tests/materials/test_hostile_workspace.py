"""A workspace that links out of itself — a cloned repository's ``knowledge/notes.md`` linked to
``~/.aws/credentials`` — sends nothing of what it links to: every place ctxlab reads workspace
files (AGENTS.md, MEMORY.md, knowledge, the memory flush, the demo's tools) or writes offloads
confines itself to the workspace, every link followed, and says what it refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import OffloadError
from ctxlab.materials import MAX_FILE_BYTES, load_workspace
from ctxlab.models import ScriptedModel, tool_call
from ctxlab.pipeline import WorkspaceOffloader
from tests.hostile import listing

SECRET = "aws_secret_access_key = AKIA-NEVER-SEND-THIS"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace, with a secret in it."""
    folder = tmp_path / "home" / ".aws"
    folder.mkdir(parents=True)
    (folder / "credentials").write_text(f"[default]\n{SECRET}\n")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "knowledge").mkdir(parents=True)
    (folder / "knowledge" / "guide.md").write_text("Use ISO dates in the export.")
    return folder


def _sent(model: ScriptedModel) -> str:
    return "\n".join(str(r.to_anthropic()) for r in model.requests)


async def test_a_knowledge_link_out_of_the_workspace_is_not_read_or_sent(
    root: Path, outside: Path
) -> None:
    (root / "knowledge" / "creds.md").symlink_to(outside / "credentials")
    model = ScriptedModel(["ok"], context_window=200_000)
    agent = Agent(model=model, counter=ApproximateCounter(), workspace=root)
    await agent("go")
    sent = _sent(model)
    assert SECRET not in sent and "Use ISO dates in the export." in sent
    refused = [t for t in agent.manifests[-1].transforms if t.kind == "workspace_refused"]
    assert [t.target for t in refused] == ["workspace/knowledge/creds.md"]
    assert "leads outside the workspace" in refused[0].detail
    assert "nothing sent" in refused[0].detail


def test_agents_memory_and_a_linked_out_knowledge_folder_are_refused(
    root: Path, outside: Path
) -> None:
    (root / "AGENTS.md").symlink_to(outside / "credentials")
    (root / "MEMORY.md").symlink_to(outside / "credentials")
    (root / "knowledge" / "more").symlink_to(outside)  # a folder inside, linked out: not walked
    found = load_workspace(root)
    assert found.system == ()
    assert [m.item_id for m in found.materials] == ["workspace/knowledge/guide.md"]
    assert [t.target for t in found.refused] == ["workspace/AGENTS.md", "workspace/MEMORY.md"]
    # The knowledge folder itself linked out: refused whole, never walked.
    (root / "knowledge").rename(root / "old_knowledge")
    (root / "knowledge").symlink_to(outside)
    (outside / "notes.md").write_text(SECRET)
    found = load_workspace(root)
    assert found.materials == ()
    assert [t.target for t in found.refused][-1] == "workspace/knowledge"
    assert SECRET not in str(found)


def test_links_that_stay_inside_and_the_size_limit(root: Path) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "rules.md").write_text("Rules inside the repository.")
    (root / "knowledge" / "rules.md").symlink_to(root / "docs" / "rules.md")
    (root / "knowledge" / "loop.md").symlink_to(root / "knowledge" / "loop.md")
    (root / "knowledge" / "huge.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    found = load_workspace(root)
    assert [m.item_id for m in found.materials] == [
        "workspace/knowledge/guide.md",
        "workspace/knowledge/rules.md",
    ]
    refused = {t.target: t.detail for t in found.refused}
    assert set(refused) == {"workspace/knowledge/huge.md", "workspace/knowledge/loop.md"}
    assert f"{MAX_FILE_BYTES + 1:,} bytes" in refused["workspace/knowledge/huge.md"]


async def test_the_memory_flush_neither_reads_nor_writes_through_a_link_out(
    root: Path, outside: Path
) -> None:
    (root / "MEMORY.md").symlink_to(outside / "credentials")
    before = listing(outside.parent)

    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page}: " + "data " * 300

    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], context_window=2_000
    )
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter(), workspace=root)
    await agent("read the pages")
    kinds = {t.kind: t.detail for m in agent.manifests for t in m.transforms}
    assert "history_compaction" in kinds  # it compacted: the flush was tried
    assert "leads outside the workspace" in kinds["memory_flush_failed"]
    assert (root / "MEMORY.md").is_symlink()  # not replaced by a copy of what it leads to
    assert listing(outside.parent) == before
    assert SECRET not in _sent(model)


def test_an_offload_into_a_folder_linked_out_is_refused(root: Path, outside: Path) -> None:
    (root / "large_tool_results").symlink_to(outside)
    before = listing(outside)
    offloader = WorkspaceOffloader(root)
    with pytest.raises(OffloadError, match="leaves the workspace"):
        offloader.write("large_tool_results/call_1.txt", b"output")
    assert listing(outside) == before


def test_the_demo_tools_do_not_read_through_a_link_out(root: Path, outside: Path) -> None:
    from ctxlab.demo._tools import workspace_tools

    (root / "knowledge" / "creds.md").symlink_to(outside / "credentials")
    tools = {t.name: t for t in workspace_tools(root)}
    hits = tools["grep"].fn(pattern="aws|ISO")
    assert "ISO dates" in hits and SECRET not in hits
    with pytest.raises(PermissionError, match="outside the workspace"):
        tools["read_file"].fn(path="knowledge/creds.md")
    with pytest.raises(PermissionError, match="outside the workspace"):
        tools["edit_file"].fn(path="knowledge/creds.md", old="aws", new="x")
    assert SECRET in (outside / "credentials").read_text()
