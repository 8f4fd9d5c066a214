"""Each pipeline stage alone (typed input, typed output), and the caller-owned memo."""

from __future__ import annotations

import pytest

from ctxlab import (
    ApproximateCounter,
    ContextBlock,
    ContextBudgetExceeded,
    ContextConfig,
    InvalidToolPairs,
    Material,
    Materials,
    SystemPart,
    TokenCache,
    ToolSchema,
    WorkingState,
    extractive_summarizer,
    prepare,
)
from ctxlab.manifest import Thresholds
from ctxlab.messages import ToolPairScanner, UserMessage
from ctxlab.pipeline import (
    Budgeted,
    ManifestFactory,
    PreparationMemo,
    ReductionLimits,
    budget_materials,
    fixed_part,
    lay_out,
    project,
    reduce_conversation,
    reduction_due,
    scan_conversation,
    validate,
)
from tests.helpers import session, tool_turn


def cache() -> TokenCache:
    return TokenCache(ApproximateCounter())


def material(name: str, category: str, chars: int, **block: object) -> Material:
    made = ContextBlock.reference(name, "m" * chars)
    if block.get("required"):
        made = made.required()
    return Material(f"{category}/{name}", category, category, made)  # type: ignore[arg-type]


LINES = Thresholds.compute(ContextConfig(), 10_000)


def test_thresholds_are_the_engine_lines() -> None:
    assert LINES.trigger_tokens == 8_000 and LINES.notice_tokens == 6_000
    assert LINES.reserve_tokens == 1_000
    assert LINES.input_limit == 10_000 - 1_250 - 200
    assert (LINES.output_reservation, LINES.safety_margin) == (1_250, 200)
    # The trigger never exceeds the input limit; an unknown window uses the fallback.
    tight = Thresholds.compute(ContextConfig(trigger_ratio=0.9), 10_000)
    assert tight.trigger_tokens == tight.input_limit == 8_550
    assert Thresholds.compute(ContextConfig(), None).input_limit == 64_000
    assert LINES["trigger_tokens"] == LINES.get("trigger_tokens") == 8_000  # the old dict access
    with pytest.raises(KeyError):
        LINES["nope"]


def test_stage1_fixed_part_is_reused_until_system_or_tools_change() -> None:
    c = cache()
    system = (SystemPart("system_prompt", "Be brief."),)
    tools = (ToolSchema("run", "Run a command"),)
    first = fixed_part(system, tools, c)
    assert [i.id for i in first.system_items] == ["system/system_prompt"]
    assert [i.id for i in first.tool_items] == ["tool/run"]
    assert first.tokens == sum(i.tokens for i in (*first.system_items, *first.tool_items))
    assert fixed_part(system, tools, c, first) is first
    changed = fixed_part((SystemPart("system_prompt", "Be long."),), tools, c, first)
    assert changed is not first and changed.system_text == "Be long."


def test_stage4_budget_omits_memory_then_knowledge_then_sources_never_required() -> None:
    c = cache()
    blocks = [
        material("src", "source", 400),
        material("know", "knowledge", 400),
        material("mem", "memory", 400),
        material("must", "source", 400, required=True),
    ]
    fits = budget_materials(blocks, c, excess_without_them=-10_000)
    assert fits.kept == tuple(blocks) and not fits.transforms
    one_too_many = budget_materials(blocks, c, excess_without_them=-fits.total + 1)
    assert [str(t) for t in one_too_many.transforms] == ["omitted_for_budget:memory/mem"]
    everything = budget_materials(blocks, c, excess_without_them=10_000)
    assert [m.item_id for m in everything.kept] == ["source/must"]
    assert [t.target for t in everything.transforms] == [
        "memory/mem",
        "knowledge/know",
        "source/src",
    ]


def test_stage6_projection_adds_task_state_and_the_notice_above_its_line() -> None:
    c = cache()
    task = Material("task/state", "task", "task", ContextBlock.runtime("task_state", "todo"))
    base = Budgeted((material("doc", "source", 40),), {"source/doc": 14})

    def projected(base_tokens: int, purpose: str = "reasoning") -> list[str]:
        out = project(
            base,
            (),
            cache=c,
            projection=lambda conversation: [task],
            base_tokens=base_tokens,
            thresholds=LINES,
            purpose=purpose,  # type: ignore[arg-type]
            tool_enabled=False,
        )
        return [m.item_id for m in out.kept]

    assert projected(100) == ["task/state", "source/doc"]  # transient first, task leading
    assert projected(LINES.notice_tokens) == ["task/state", "runtime/context_usage", "source/doc"]
    assert projected(LINES.notice_tokens, "summary") == ["source/doc"]


def test_stage7_layout_orders_system_summary_conversation_transient_references() -> None:
    c = cache()
    fixed = fixed_part((SystemPart("s", "sys"),), (ToolSchema("run"),), c)
    runtime = Material("source/x/now", "source", "source/x", ContextBlock.runtime("now", "NOW"))
    doc = material("doc", "source", 10)
    kept = Budgeted((runtime, doc), {runtime.item_id: 5, doc.item_id: 7})
    conversation = (UserMessage(content="hi"),)
    from ctxlab.messages._state import Summary
    from ctxlab.pipeline._scan import message_items

    summary = Summary(text="SUMMARY")
    items = message_items(conversation, c)
    tokens = sum(i.tokens for i in items)
    layout = lay_out(fixed, summary, 9, conversation, items, tokens, kept, c)
    placements = [i.placement for i in layout.items]
    assert placements == ["system", "tools", "summary", "conversation", "transient", "references"]
    texts = [m.content[0].text for m in layout.request.messages]  # type: ignore[union-attr]
    assert texts[0] == "SUMMARY" and texts[1] == "hi" and "NOW" in texts[2] and "mmm" in texts[3]
    assert layout.estimated_tokens == sum(i.tokens for i in layout.items)


def test_stage7_layout_leads_with_one_summary_message_per_summary() -> None:
    # The summary's message is built (its text checked) once per summary, not at every step it
    # leads: two layouts share the object; its hash is the manifest's summary item id.
    from ctxlab.messages import TextBlock
    from ctxlab.messages._state import Summary

    c = cache()
    fixed = fixed_part((SystemPart("s", "sys"),), (), c)
    conversation = (UserMessage(content="hi"),)
    summary = Summary(text="The task: fix it.\nDone so far: nothing.")
    items: list = []
    first, second = (
        lay_out(fixed, summary, 9, conversation, items, 0, Budgeted((), {}), c) for _ in range(2)
    )
    lead = first.request.messages[0]
    assert second.request.messages[0] is lead
    assert lead.content == (TextBlock(text=summary.text),)
    digest = TextBlock(text=summary.text).content_hash
    assert summary.content_hash == digest
    assert [i.id for i in first.items if i.placement == "summary"] == [f"summary/{digest}"]
    # A copy with another text is not led by the old text, nor hashed as it.
    other = summary.model_copy(update={"text": "Another summary."})
    assert other.message.content[0].text == "Another summary."  # type: ignore[union-attr]
    assert other.content_hash == Summary(text="Another summary.").content_hash != digest
    assert summary.model_copy().message is summary.message  # nothing changed: kept


def test_stage8_validation_checks_pairs_then_budget_and_carries_the_manifest() -> None:
    c = cache()
    fixed = fixed_part((), (), c)
    turn = tool_turn("c1", "out")
    broken = (UserMessage(content="go"), turn[0])

    def factory() -> ManifestFactory:
        return ManifestFactory("r1", "reasoning", "m", c, LINES, None)

    from ctxlab.pipeline._scan import message_items

    items = message_items(broken, c)
    layout = lay_out(
        fixed, None, 0, broken, items, sum(i.tokens for i in items), Budgeted((), {}), c
    )
    with pytest.raises(InvalidToolPairs) as caught:
        validate(layout, ToolPairScanner().feed(broken), "reasoning", factory())
    assert caught.value.manifest is not None
    assert caught.value.manifest.validation == "invalid_tool_pairs"
    # An unfinished call is allowed only when compacting.
    passed = validate(layout, ToolPairScanner().feed(broken), "compaction", factory())
    assert passed.validation == "passed" and passed.thresholds is LINES
    small = Thresholds.compute(ContextConfig(), 10_000)
    tiny = ManifestFactory(
        "r2", "reasoning", "m", c, Thresholds(**{**small.to_dict(), "input_limit": 1}), None
    )
    with pytest.raises(ContextBudgetExceeded) as over:
        validate(layout, ToolPairScanner().feed(broken), "compaction", tiny)
    assert over.value.manifest is not None and over.value.manifest.validation == "budget_exceeded"


def test_stages2_3_scan_reuses_the_previous_scan_and_matches_a_full_one() -> None:
    c, config = cache(), ContextConfig(tool_result_limit=20)
    messages = tuple(session(6, output_chars=100))
    first, _ = scan_conversation(messages[:7], config, None, c)
    # As a preparer commits it: the processed conversation, then what arrived since.
    grown, moved = scan_conversation(first.conversation + messages[7:], config, None, c, first)
    full, full_moved = scan_conversation(messages, config, None, cache())
    assert grown.conversation[:7] == first.conversation
    assert grown.items[6] is first.items[6]  # reused, not itemized again
    assert (grown.tokens, grown.items, grown.conversation) == (
        full.tokens,
        full.items,
        full.conversation,
    )
    assert len(full_moved) == 6 and len(moved) == 3  # only the new results were truncated
    # Another config: the previous scan does not apply and is not used.
    other, _ = scan_conversation(messages, ContextConfig(), None, c, grown)
    assert other.tokens == scan_conversation(messages, ContextConfig(), None, cache())[0].tokens


async def test_stage5_is_due_only_above_its_line_and_compacts_when_it_is() -> None:
    c, config = cache(), ContextConfig()
    scan, _ = scan_conversation(tuple(session(8, output_chars=400)), config, None, c)
    quiet = ReductionLimits.of(LINES, 0)
    assert not reduction_due(scan, None, config=config, cache=c, limits=quiet)
    assert reduction_due(scan, None, config=config, cache=c, limits=quiet, force=True)
    low = ReductionLimits.of(LINES, 0, trigger_override=10)
    assert low.trigger_tokens == 10 and quiet.trigger_tokens == LINES.trigger_tokens
    assert reduction_due(scan, None, config=config, cache=c, limits=low)
    # A configured light pass makes the stage run even under the line.
    passes = config.merge(compaction={"truncate_args": {}})
    assert reduction_due(scan, None, config=passes, cache=c, limits=quiet)
    due = await reduce_conversation(
        scan.conversation,
        None,
        config=config,
        cache=c,
        limits=low,
        summarizer=extractive_summarizer,
        conversation_tokens=scan.tokens,
    )
    assert due.compaction is not None and due.compaction.method == "summary"
    assert due.summary is not None and len(due.conversation) < len(scan.conversation)


async def test_a_memo_changes_the_cost_never_the_result_and_is_not_shared() -> None:
    messages = session(10, output_chars=300)
    shared = cache()  # one counter cache, two unrelated preparers with their own memos
    memo_a, memo_b = PreparationMemo(), PreparationMemo()
    materials = Materials(system=(SystemPart("s", "Be brief."),))
    kwargs = dict(context_window=4_000, materials=materials, request_id="r")
    for end in range(3, len(messages) + 1, 2):
        state = WorkingState(conversation=tuple(messages[:end]))
        a = await prepare(state, counter=shared, memo=memo_a, **kwargs)  # type: ignore[arg-type]
        other = WorkingState(conversation=tuple(messages[: max(end - 4, 1)]))
        await prepare(other, counter=shared, memo=memo_b, **kwargs)  # type: ignore[arg-type]
        fresh = await prepare(state, counter=cache(), **kwargs)  # type: ignore[arg-type]
        assert a.manifest.items == fresh.manifest.items
        assert a.request == fresh.request
    assert memo_a.scan is not None and memo_b.scan is not None
    assert len(memo_a.scan.conversation) != len(memo_b.scan.conversation)
    assert not hasattr(shared, "memo")


async def test_the_former_keywords_of_prepare_still_work_with_a_warning() -> None:
    from ctxlab import ApproximateCounter, WorkingState, prepare
    from ctxlab.messages import TextBlock, UserMessage
    from ctxlab.pipeline import CallerInputs, CompactionOrder

    state = WorkingState(conversation=(UserMessage(content=(TextBlock(text="hello there"),)),))
    grouped = await prepare(
        state,
        context_window=8_000,
        counter=ApproximateCounter(),
        request_id="r1",
        caller=CallerInputs(usage_notice=False),
        compaction=CompactionOrder(threshold=10),
    )
    with pytest.warns(DeprecationWarning) as warned:
        former = await prepare(
            state,
            context_window=8_000,
            counter=ApproximateCounter(),
            call_id="r1",
            usage_notice=False,
            compaction_threshold=10,
        )
    assert sorted(str(w.message) for w in warned) == [
        "prepare(call_id=) is now request_id=",
        "prepare(compaction_threshold=) is now compaction=CompactionOrder(threshold=...)",
        "prepare(usage_notice=) is now caller=CallerInputs(usage_notice=...)",
    ]
    assert former.request == grouped.request
    assert former.manifest.request_id == grouped.manifest.request_id == "r1"
    with pytest.raises(TypeError, match="unexpected keyword argument 'windw'"):
        await prepare(state, context_window=8_000, counter=ApproximateCounter(), windw=3)
