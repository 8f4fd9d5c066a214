"""Context sources, instructions and workspace material under the rules of the reference."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import SourceError, SourceUnavailable, UsageError
from ctxlab.materials import ContextBlock, ContextRequest, TextSource
from ctxlab.messages import UserMessage
from ctxlab.models import ScriptedModel, tool_call


def noop() -> str:
    """Does nothing."""
    return "ok"


def make(replies: list[object], **kwargs: object) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies, context_window=kwargs.pop("window", 200_000))  # type: ignore[arg-type]
    agent = Agent(
        name="a1",
        system_prompt="Be brief.",
        model=model,
        tools=[noop],
        counter=ApproximateCounter(),
        user_id="alice",
        session_id="s1",
        **kwargs,  # type: ignore[arg-type]
    )
    return agent, model


def material_text(model: ScriptedModel, index: int) -> str:
    """All text after the conversation in request ``index`` (transient + references)."""
    messages = model.requests[index].messages
    return "\n".join(
        getattr(b, "text", "")
        for m in messages
        if isinstance(m, UserMessage)
        for b in m.content
        if getattr(b, "text", "").startswith("<")
    )


async def test_a_source_is_loaded_once_per_preparation_with_the_request_identity() -> None:
    seen: list[ContextRequest] = []

    async def record(request: ContextRequest) -> list[ContextBlock]:
        seen.append(request)
        return [ContextBlock.runtime("status", f"load {len(seen)}")]

    agent, model = make([tool_call("noop"), tool_call("noop"), "done"])
    agent.context_source("change-record", record)
    assert seen == []  # registration does not load
    await agent("go")
    assert len(seen) == 3
    assert [r.call_id for r in seen] == [m.call_id for m in agent.manifests]
    assert {(r.agent_id, r.user_id, r.session_id, r.purpose) for r in seen} == {
        ("a1", "alice", "s1", "reasoning")
    }
    assert "load 1" in material_text(model, 0) and "load 3" in material_text(model, 2)
    item = next(i for i in agent.manifests[0].items if i.source_id == "source/change-record")
    assert item.id == "source/change-record/status"
    assert (
        item.placement == "transient"
        and item.revision == ContextBlock.runtime("s", "load 1").content_hash
    )


async def test_revision_and_reference_placement() -> None:
    async def notes(request: ContextRequest) -> list[ContextBlock]:
        return [
            ContextBlock.reference("format", "Export columns: date, account").with_revision("v7")
        ]

    agent, model = make(["done"])
    agent.context_source("notes", notes)
    await agent("go")
    item = next(i for i in agent.manifests[0].items if i.id == "source/notes/format")
    assert item.revision == "v7" and item.placement == "references"
    assert model.requests[0].messages[-1].content[0].text.startswith("<HARNESS_CONTEXT")  # type: ignore[union-attr]


def broken_source(failure: str) -> object:
    """A source that raises, hangs past its timeout, or returns no result at all."""

    async def broken(request: ContextRequest) -> list[ContextBlock] | None:
        if failure == "raise":
            raise ConnectionError("records service down")
        if failure == "timeout":
            await asyncio.sleep(10)
        return None

    return broken


@pytest.mark.parametrize("failure", ["raise", "timeout", "none"])
async def test_failures_fail_the_preparation_under_the_fail_policy(failure: str) -> None:
    agent, _ = make(["never"])
    agent.context_source("records", broken_source(failure), timeout=0.05)
    events = []
    with pytest.raises(SourceUnavailable, match="source 'records' failed"):
        async for event in agent.stream_events("go"):
            events.append(event)
    build = next(e.manifest for e in events if e.type == "context_build")
    assert build.validation == "build_failed"
    assert build.estimated_input_tokens == -1 and build.counting_method == "unavailable"
    assert build.items == ()


@pytest.mark.parametrize("failure", ["raise", "timeout", "none"])
async def test_failures_are_omitted_under_the_omit_policy(failure: str) -> None:
    agent, model = make(["fine"])
    agent.context_source("records", broken_source(failure), timeout=0.05, on_failure="omit")
    await agent("go")
    codes = agent.manifests[0].transform_codes
    assert len(codes) == 1 and codes[0].startswith("source_unavailable:source/records/:")
    reason = {
        "raise": "ConnectionError: records service down",
        "timeout": "timed out",
        "none": "no result",
    }
    assert reason[failure] in codes[0]
    assert material_text(model, 0) == ""


async def test_default_timeout_is_five_seconds() -> None:
    agent, _ = make([])
    assert agent.context_source("x", TextSource("t")).timeout == 5.0


async def test_an_empty_list_is_no_material_and_no_failure() -> None:
    async def nothing(request: ContextRequest) -> list[ContextBlock]:
        return []

    agent, _ = make(["ok"])
    agent.context_source("empty", nothing)
    await agent("go")
    assert agent.manifests[0].transforms == ()
    assert not [i for i in agent.manifests[0].items if i.source_id]


@pytest.mark.parametrize(
    ("blocks", "message"),
    [
        ([ContextBlock.runtime("a", "1"), ContextBlock.runtime("a", "2")], "twice"),
        ([ContextBlock.runtime(" ", "1")], "empty id"),
        (["not a block"], "ContextBlock objects"),
        ([ContextBlock.runtime("a", "1").required()], "required block"),
    ],
)
async def test_structural_errors_are_not_hidden_by_omit(blocks: list[object], message: str) -> None:
    async def bad(request: ContextRequest) -> list[object]:
        return blocks

    agent, _ = make(["never"])
    agent.context_source("bad", bad, on_failure="omit")
    with pytest.raises(SourceError, match=message):
        await agent("go")


def test_registration_rules() -> None:
    agent, _ = make([])
    for name in ("", "-lead", "has space", "a/b"):
        with pytest.raises(UsageError, match="invalid source name"):
            agent.context_source(name, TextSource())
    agent.context_source("ok.name_1-x", TextSource())
    with pytest.raises(UsageError, match="already registered"):
        agent.context_source("ok.name_1-x", TextSource())
    registration = agent.context_source("opt", TextSource(), on_failure="omit")
    registration.required = True
    with pytest.raises(UsageError, match="cannot come from an 'omit' source"):
        registration.__post_init__()
    with pytest.raises(UsageError, match="on_failure"):
        agent.context_source("p", TextSource(), on_failure="ignore")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="timeout"):
        agent.context_source("q", TextSource(), timeout=0)


async def test_a_text_source_edited_between_two_steps_of_one_call() -> None:
    notes = TextSource("version one", id="notes")

    def edit() -> str:
        """Edits the notes while the call runs."""
        notes.text = "version two"
        return "edited"

    model = ScriptedModel([tool_call("edit"), "done"])
    agent = Agent(model=model, tools=[edit], counter=ApproximateCounter())
    agent.context_source("notes", notes)
    await agent("go")
    assert "version one" in material_text(model, 0)
    assert "version two" in material_text(model, 1) and "version one" not in material_text(model, 1)
    revisions = [
        next(i.revision for i in m.items if i.id == "source/notes/notes") for m in agent.manifests
    ]
    assert revisions == ["edit-0", "edit-1"]


async def test_omission_under_a_tight_budget_follows_category_then_priority(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("memory " * 400)
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "guide.md").write_text("knowledge " * 400)
    texts = {name: f"{name} " * 400 for name in ("low", "mid", "high")}

    def source(name: str, priority: int) -> object:
        async def load(request: ContextRequest) -> list[ContextBlock]:
            return [ContextBlock.reference(name, texts[name]).with_priority(priority)]

        return load

    model = ScriptedModel(["ok"], context_window=2_000)
    agent = Agent(model=model, workspace=tmp_path, counter=ApproximateCounter())
    agent.context_source("a", source("high", 30))
    agent.context_source("b", source("low", 10))
    agent.context_source("c", source("mid", 20))

    async def must(request: ContextRequest) -> list[ContextBlock]:
        return [ContextBlock.reference("keep", "keep " * 400).required()]

    agent.context_source("d", must)
    await agent("go")
    omitted = [t.target for t in agent.manifests[0].transforms if t.kind == "omitted_for_budget"]
    assert omitted[:3] == ["workspace/MEMORY.md", "workspace/knowledge/guide.md", "source/b/low"]
    kept = {i.id for i in agent.manifests[0].items}
    assert "source/d/keep" in kept  # required material is never omitted
    assert "source/a/high" in kept
    assert agent.manifests[0].estimated_input_tokens <= agent.manifests[0].input_limit


async def test_instructions_and_agents_md_go_into_system(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run the tests with make test.")
    model = ScriptedModel(["ok"])
    agent = Agent(
        system_prompt="Base.", model=model, workspace=tmp_path, counter=ApproximateCounter()
    )
    agent.instruction("change-policy", "Preserve public API behavior.")
    await agent("go")
    assert model.requests[0].system == (
        "Base.\n\nPreserve public API behavior.\n\nRun the tests with make test."
    )
    ids = [i.id for i in agent.manifests[0].items if i.placement == "system"]
    assert ids == [
        "system/system_prompt",
        "system/instruction/change-policy",
        "system/workspace/AGENTS.md",
    ]


async def test_workspace_material_is_loaded_once_per_call(tmp_path: Path) -> None:
    memory = tmp_path / "MEMORY.md"
    memory.write_text("The export uses ISO dates.")

    def remember() -> str:
        """Writes to MEMORY.md during the call."""
        memory.write_text("The export uses US dates.")
        return "written"

    model = ScriptedModel([tool_call("remember"), "done", "again"])
    agent = Agent(model=model, tools=[remember], workspace=tmp_path, counter=ApproximateCounter())
    await agent("go")
    assert "ISO dates" in material_text(model, 1)  # same call: the old material
    await agent("next call")
    assert "US dates" in material_text(model, 2)
    item = next(i for i in agent.manifests[-1].items if i.id == "workspace/MEMORY.md")
    assert item.kind == "memory" and item.placement == "references"


async def test_sources_are_not_loaded_for_summaries() -> None:
    loads = []

    async def counted(request: ContextRequest) -> list[ContextBlock]:
        loads.append(request.purpose)
        return [ContextBlock.runtime("x", "state")]

    def fetch(page: int) -> str:
        """A page."""
        return "lorem ipsum " * 100

    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], context_window=2_000
    )
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
    agent.context_source("s", counted)
    await agent("go")
    assert model.summary_requests  # a compaction happened
    assert loads == [m.purpose for m in agent.manifests if m.purpose != "summary"]
    assert any(m.purpose == "summary" for m in agent.manifests)  # summaries ran, without sources
    assert set(loads) == {"reasoning"}


async def test_disabled_source_and_overrides() -> None:
    from ctxlab.materials import load_sources

    notes = TextSource("release notes v7")
    agent, model = make(["a", "b"])
    registration = agent.context_source("notes", notes)
    registration.update(enabled=False)
    await agent("go")
    assert material_text(model, 0) == ""
    registration.update(enabled=True, priority=99, required=True)
    await agent("again")
    assert "release notes v7" in material_text(model, 1)
    request = ContextRequest(None, None, None, "r", "reasoning")
    (loaded,), _ = await load_sources([registration], request)
    assert (loaded.block.priority, loaded.block.is_required) == (99, True)
    registration.update(required=False)
    (loaded,), _ = await load_sources([registration], request)
    assert loaded.block.is_required is False
