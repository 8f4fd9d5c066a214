"""Rules of the two reference guides (000: ratio-triggered compression; 002: the harness), each
tested at the agent: summary model and prompt, usage notice, copies, triggers, selection
policy, workspace limits, plan/build mode, the memory flush."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel, tool_call

WINDOW = 2_000


def fetch(page: int) -> str:
    """Fetch a page of the log."""
    return f"page {page} /var/log/app-{page}.log\n" + "lorem ipsum " * 100


async def test_a_separate_summary_model_writes_the_summaries_and_each_request_is_observable() -> (
    None
):
    reasoning = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], context_window=WINDOW
    )
    summaries = ScriptedModel([], name="summarizer", context_window=WINDOW)
    agent = Agent(
        model=reasoning, summary_model=summaries, tools=[fetch], counter=ApproximateCounter()
    )
    events = [e async for e in agent.stream_events("read the logs")]
    assert summaries.summary_requests and not reasoning.summary_requests
    built = [e for e in events if e.type == "context_build" and e.manifest.purpose == "summary"]
    assert len(built) == len(summaries.summary_requests)
    manifest, request = built[0].manifest, built[0].request
    assert manifest.model == "summarizer" and request is not None
    # What the summary request holds: the compacted prefix, then the instruction.
    assert "task_overview" in request.messages[-1].content[-1].text  # type: ignore[union-attr]
    assert manifest.estimated_input_tokens == sum(i.tokens for i in manifest.items)
    assert manifest in agent.manifests


async def test_a_summary_prompt_with_messages_replaces_the_prefix_by_a_transcript() -> None:
    from ctxlab.models import summary_model_request
    from ctxlab.pipeline import SummaryRequest

    config = ContextConfig().merge(
        compaction={"summary_prompt": "Summarize this session:\n{messages}\n(end)"}
    )
    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], context_window=WINDOW
    )
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter(), context_config=config)
    await agent("read the logs")
    asked: SummaryRequest = model.summary_requests[0]
    assert asked.template == "Summarize this session:\n{messages}\n(end)"
    sent = summary_model_request(asked, None)
    (only,) = sent.messages
    history = only.content[0].text  # type: ignore[union-attr]
    assert history.startswith("Summarize this session:\nuser: read the logs")
    assert "called fetch" in history and "/var/log/app-0.log" in history
    with pytest.raises(ValueError, match=r"\{messages\}"):
        ContextConfig().merge(compaction={"summary_prompt": "no placeholder"})


async def test_the_usage_notice_waits_while_a_todo_item_is_in_progress() -> None:
    def notices(model: ScriptedModel) -> list[bool]:
        return ["Context usage:" in str(r.messages[-1].model_dump()) for r in model.requests]

    # The item in progress is not the first: any item in progress holds the notice back.
    plan = {"content": "plan the reading", "status": "completed"}
    todo = {"todos": [plan, {"content": "read the logs", "status": "in_progress"}]}
    done = {"todos": [plan, {"content": "read the logs", "status": "completed"}]}
    config = ContextConfig(trigger_ratio=0.9, context_buffer_ratio=0.6)  # notice from 600 tokens
    script = [
        tool_call("todo_write", todo),
        *(tool_call("fetch", {"page": i}) for i in range(3)),
        tool_call("todo_write", done),
        "done",
    ]
    model = ScriptedModel(script, context_window=WINDOW)
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter(), context_config=config)
    agent.tasks.enable_list()
    await agent("read the logs")
    seen = notices(model)
    over = [m.estimated_input_tokens > m.thresholds.notice_tokens for m in agent.manifests]  # type: ignore[union-attr]
    # Requests 1-4 are made while the item is in progress: held back though over the line.
    assert any(over[1:5]) and not any(seen[1:5])
    assert over[-1] and seen[-1]  # the task completed: the notice is back


async def test_a_copy_starts_from_the_same_point_and_goes_its_own_way() -> None:
    from ctxlab import TextSource

    setups: list[str] = []

    class Notes(TextSource):
        def __init__(self, text: str) -> None:
            setups.append("setup")
            super().__init__(text)

    model = ScriptedModel(["first", "a", "b"], context_window=WINDOW)
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
    registration = agent.context_source("notes", Notes("release notes"), timeout=2)
    registration.update(priority=7)
    agent.instruction("style", "Be brief.")
    agent.tasks.enable_list()
    agent.tasks.begin("release", "write the release notes")
    agent.tasks.set_mode("plan", "docs/PLAN.md")
    await agent("hello")
    copy = agent.copy(context_config=ContextConfig(trigger_ratio=0.5))
    # The task state is the agent's as it is now, and its own from here on.
    assert copy.tasks.state == agent.tasks.state
    assert (copy.tasks.state.mode, copy.tasks.state.plan_path) == ("plan", "docs/PLAN.md")
    copy.tasks.set_mode("build")
    assert agent.tasks.state.mode == "plan"
    # A switch to BUILD keeps the plan's path: the build follows that plan.
    assert (copy.tasks.state.mode, copy.tasks.state.plan_path) == ("build", "docs/PLAN.md")
    assert setups == ["setup"]  # the source instance is kept, not built again
    assert copy.sources["notes"].source is agent.sources["notes"].source
    assert copy.sources["notes"] is not registration and copy.sources["notes"].priority == 7
    assert copy.instructions == {"style": "Be brief."} and copy.context_config.trigger_ratio == 0.5
    assert copy.context == agent.context and copy.history == agent.history
    assert copy.session_id != agent.session_id
    await copy("only the copy")
    assert len(copy.history) == len(agent.history) + 2
    copy.sources["notes"].update(enabled=False)
    assert agent.sources["notes"].enabled  # independent registrations


async def test_the_message_trigger_compacts_on_its_own_and_the_tail_expands_at_a_pair() -> None:
    from ctxlab import extractive_summarizer
    from ctxlab.messages import find_tool_pair_problems
    from tests.helpers import prepared, session

    messages = tuple(session(6, output_chars=40))  # 13 small messages: far under any token line
    config = ContextConfig().merge(compaction={"trigger_messages": 10})
    prep = await prepared(
        messages, context_window=200_000, config=config, summarizer=extractive_summarizer
    )
    assert prep.compaction is not None  # the token tail alone would have kept all 13
    assert len(prep.state.conversation) < len(messages)
    # keep_messages=3 would start the tail at a tool result: it expands to the call instead.
    config = config.merge(compaction={"keep_messages": 3})
    prep = await prepared(
        messages, context_window=200_000, config=config, summarizer=extractive_summarizer
    )
    kept = prep.state.conversation
    assert len(kept) >= 3 and kept[0].role == "assistant"
    assert find_tool_pair_problems(kept) == []


async def test_a_selection_policy_orders_omissions_and_bad_answers_are_refused() -> None:
    from ctxlab import ContextBlock
    from ctxlab.exceptions import ContextBudgetExceeded, UsageError

    async def docs(request: object) -> list[ContextBlock]:
        return [
            ContextBlock.reference("a", "alpha " * 600),
            ContextBlock.reference("b", "beta " * 700),
            ContextBlock.reference("must", "keep " * 10).required(),
        ]

    def make(policy: object) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(["ok"], context_window=WINDOW)
        agent = Agent(model=model, counter=ApproximateCounter(), selection_policy=policy)  # type: ignore[arg-type]
        agent.context_source("docs", docs)
        return agent, model

    # The default drops the later block first ("b"); the policy says "a" first.
    agent, model = make(lambda optional: ["source/docs/a", "source/docs/b"])
    await agent("go")
    omitted = [t.target for t in agent.manifests[-1].transforms if t.kind == "omitted_for_budget"]
    assert omitted == ["source/docs/a"]
    assert "beta" in str(model.requests[-1].messages[-1].model_dump())
    # Only what the policy names may go: "b" is never dropped behind the user's back, even when
    # dropping "a" is not enough (the request then fails, with what was kept).
    agent, model = make(lambda optional: [m.item_id for m in optional if m.item_id.endswith("/a")])
    agent.context_source("more", lambda request: _more())
    with pytest.raises(ContextBudgetExceeded):
        await agent("go")
    failed = agent.manifests[-1]
    omitted = [t.target for t in failed.transforms if t.kind == "omitted_for_budget"]
    assert omitted == ["source/docs/a"]
    assert "source/docs/b" in {i.id for i in failed.items}
    for bad, reason in [
        (lambda o: ["source/docs/a", "source/docs/a"], "twice"),
        (lambda o: ["source/docs/nope"], "not optional material"),
        (lambda o: ["source/docs/must"], "required"),
        (lambda o: ["system/system_prompt"], "System"),
    ]:
        agent, _ = make(bad)
        with pytest.raises(UsageError, match=reason):
            await agent("go")


async def _more() -> list[object]:
    from ctxlab import ContextBlock

    return [ContextBlock.reference("c", "gamma " * 500)]


async def test_workspace_material_is_cut_to_its_own_limit_knowledge_first(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    (root / "AGENTS.md").write_text("Project rules. " * 50)
    (root / "MEMORY.md").write_bytes(b"Remember caf\xe9. " + b"memo " * 2000)  # not UTF-8
    (root / "knowledge").mkdir()
    (root / "knowledge" / "a.md").write_text("alpha " * 3000)
    (root / "knowledge" / "b.md").write_text("beta " * 3000)
    model = ScriptedModel(["ok", "ok"], context_window=200_000)
    agent = Agent(model=model, counter=ApproximateCounter(), workspace=root)
    await agent("go")
    manifest = agent.manifests[-1]
    trimmed = [t for t in manifest.transforms if t.kind == "workspace_trimmed"]
    assert [t.target for t in trimmed] == ["workspace/knowledge/b.md"]  # the last knowledge first
    workspace = [i for i in manifest.items if i.id.startswith(("workspace/", "system/workspace"))]
    assert sum(i.tokens for i in workspace) <= 8_000 + 4 * len(workspace) + 100  # framing
    assert "Remember caf\ufffd" in str(model.requests[0].messages[-1].model_dump())
    # The limit is a config field; 0 sets none.
    agent.context_config = agent.context_config.merge(budget={"workspace_max_tokens": 0})
    await agent("again")
    assert not [t for t in agent.manifests[-1].transforms if t.kind == "workspace_trimmed"]


def test_limit_workspace_gives_way_knowledge_then_memory_then_agents() -> None:
    from ctxlab.materials import ContextBlock, Material, SystemPart, limit_workspace

    count = ApproximateCounter().count_text
    system = (
        SystemPart("system_prompt", "x" * 4000),
        SystemPart("workspace/AGENTS.md", "r" * 2000),
    )
    blocks = (
        Material(
            "workspace/MEMORY.md", "workspace", "memory", ContextBlock.reference("m", "m" * 2000)
        ),
        Material(
            "workspace/knowledge/a.md",
            "workspace",
            "knowledge",
            ContextBlock.reference("a", "a" * 2000),
        ),
        Material(
            "workspace/knowledge/b.md",
            "workspace",
            "knowledge",
            ContextBlock.reference("b", "b" * 2000),
        ),
    )
    new_system, new_blocks, notes = limit_workspace(system, blocks, 700, count)
    assert [t.target for t in notes] == [
        "workspace/knowledge/b.md",
        "workspace/knowledge/a.md",
        "workspace/MEMORY.md",
    ]
    sizes = [count(p.text) for p in new_system[1:]] + [count(m.block.text) for m in new_blocks]
    assert sum(sizes) <= 700
    assert new_system[0] is system[0]  # the system prompt is not workspace material
    assert "read knowledge/b.md for the rest" in new_blocks[2].block.text


async def test_plan_and_build_mode_is_projected_switchable_and_survives_compaction(
    tmp_path: object,
) -> None:
    from pathlib import Path

    from ctxlab import SessionLog

    def mode_of(request: object) -> str:
        text = str(request.messages[-1].model_dump())  # type: ignore[attr-defined]
        return "PLAN" if "Mode: PLAN" in text else "BUILD" if "Mode: BUILD" in text else "-"

    log = SessionLog(Path(str(tmp_path)) / "log.sqlite")
    script = [
        *(tool_call("fetch", {"page": i}) for i in range(2)),
        tool_call("switch_mode", {"mode": "build"}),
        tool_call("fetch", {"page": 9}),
        "done",
    ]
    model = ScriptedModel(script, context_window=WINDOW)
    agent = Agent(
        model=model, tools=[fetch], counter=ApproximateCounter(), session_log=log, session_id="s"
    )
    agent.tasks.set_mode("plan", plan_path="PLAN.md")
    agent.tasks.enable_mode_tool()
    await agent("plan the fix")
    modes = [mode_of(r) for r in model.requests]
    assert modes[:3] == ["PLAN"] * 3 and modes[3:] == ["BUILD", "BUILD"]
    assert "Mode: PLAN (plan: PLAN.md)" in str(model.requests[0].messages[-1].model_dump())
    assert any(s.name == "switch_mode" for s in model.requests[0].tools)
    assert await agent.compress_context(force=True) is not None
    assert agent.tasks.state.mode == "build" and agent.tasks.state.plan_path == "PLAN.md"
    resumed = Agent(
        model=ScriptedModel(["ok"]), counter=ApproximateCounter(), session_log=log, session_id="s"
    )
    assert resumed.tasks.state.mode == "build"
    await resumed("go on")
    assert mode_of(resumed.model.requests[0]) == "BUILD"  # type: ignore[attr-defined]


def _fetching_agent(root: object) -> Agent:
    """An agent that fetches seven pages into a small window (it compacts), in ``root``."""
    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(7)), "done"], context_window=WINDOW
    )
    return Agent(model=model, tools=[fetch], counter=ApproximateCounter(), workspace=root)


async def test_facts_are_flushed_to_memory_before_compaction_bounded_and_never_blocking(
    tmp_path: object,
) -> None:
    from pathlib import Path

    from ctxlab.agent._memory_flush import HEADER, MAX_FACTS

    root = Path(str(tmp_path))
    # A fact already in the user's part of the file is not written again in ctxlab's section.
    known = '- $ fetch {"page": 1}  → ok'
    (root / "MEMORY.md").write_text(f"# Notes\nThe export uses ISO dates.\n{known}\n")
    agent = _fetching_agent(root)
    await agent("read the logs")
    memory = (root / "MEMORY.md").read_text()
    assert memory.startswith("# Notes\nThe export uses ISO dates.")  # the user's part is kept
    fact = '- $ fetch {"page": 0}  → ok'
    assert HEADER in memory and fact in memory
    assert memory.count(fact) == 1  # never twice, however many compactions
    assert memory.count(known) == 1 and memory.index(known) < memory.index(HEADER)
    summary = next(m for m in agent.manifests if m.purpose == "summary")
    assert [t.kind for t in summary.transforms] == ["memory_flush"]
    # Bounded: the section keeps its newest MAX_FACTS lines.
    facts = "\n".join(f"- fact {i}" for i in range(MAX_FACTS + 50))
    (root / "MEMORY.md").write_text(f"{HEADER}\n{facts}\n")
    await _fetching_agent(root)("again")
    lines = (root / "MEMORY.md").read_text().split(HEADER)[1].strip().splitlines()
    assert len(lines) == MAX_FACTS and "- fact 0" not in lines
    # A failed write is recorded and the compaction goes on.
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").mkdir()
    agent3 = _fetching_agent(root)
    await agent3("once more")
    kinds = [t.kind for m in agent3.manifests for t in m.transforms]
    assert "memory_flush_failed" in kinds and "history_compaction" in kinds
