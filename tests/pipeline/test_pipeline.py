from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    CompressionError,
    ContextBlock,
    ContextBudgetExceeded,
    ContextConfig,
    HintBlock,
    ImageBlock,
    InvalidToolPairs,
    Material,
    Materials,
    Preparation,
    SummaryRequest,
    SystemPart,
    TextBlock,
    ToolResultBlock,
    ToolSchema,
    ToolUseBlock,
    UserMessage,
    WorkingState,
    WorkspaceOffloader,
    extractive_summarizer,
    prepare,
)
from ctxlab.config._sections import BudgetPolicy
from ctxlab.exceptions import OffloadError
from ctxlab.pipeline import TRUNCATION_MARKER, CompactionOrder, input_limit
from ctxlab.pipeline._summary_calls import summary_request_tokens
from ctxlab.tokens import TokenCache
from tests.helpers import prepared, session, tool_turn

FIELDS = {
    "task_overview": "fix src/app.py",
    "current_state": "tests run",
    "important_discoveries": "ZeroDivisionError in app.py:12",
    "next_steps": "edit line 12",
    "context_to_preserve": "pytest -q",
}


async def fixed_summary(request: SummaryRequest) -> Mapping[str, Any]:
    return FIELDS


def state_of(messages: list) -> WorkingState:
    return WorkingState(conversation=tuple(messages))


def test_input_limit_defaults() -> None:
    policy = BudgetPolicy()
    assert input_limit(200_000, policy) == 200_000 - 4096 - 4000
    assert input_limit(16_000, policy) == 16_000 - 2000 - 320
    assert input_limit(None, policy) == 64_000
    assert input_limit(200_000, BudgetPolicy(max_input_tokens=24_000)) == 24_000
    assert input_limit(10_000, BudgetPolicy(output_reservation=500, safety_margin=10)) == 9490


async def test_layout_system_first_then_conversation_transient_references() -> None:
    messages = session(1)
    materials = Materials(
        system=(SystemPart("system_prompt", "Be careful."), SystemPart("instruction/x", "Rule.")),
        blocks=(
            Material(
                "source/docs/fmt", "source/docs", "source", ContextBlock.reference("fmt", "cols")
            ),
            Material("source/rec/st", "source/rec", "source", ContextBlock.runtime("st", "open")),
        ),
    )
    prep = await prepared(
        messages,
        context_window=100_000,
        materials=materials,
        tools=[ToolSchema("bash", "run a command")],
    )
    request = prep.request
    assert request.system == "Be careful.\n\nRule."
    assert request.messages[: len(messages)] == tuple(messages)
    transient, references = request.messages[-2:]
    assert "source/rec/st" in transient.content[0].text
    assert "source/docs/fmt" in references.content[0].text
    placements = [i.placement for i in prep.manifest.items]
    assert placements == sorted(
        placements,
        key=["system", "tools", "summary", "conversation", "transient", "references"].index,
    )
    item = next(i for i in prep.manifest.items if i.id == "source/docs/fmt")
    assert (item.source_id, item.placement, item.kind) == ("source/docs", "references", "reference")
    assert item.revision == item.content_hash
    assert prep.manifest.validation == "passed"
    assert prep.state.conversation == tuple(messages)  # nothing to shorten: unchanged
    assert prep.manifest.estimated_input_tokens == sum(prep.manifest.totals.values())


async def test_tool_result_truncation_marker_and_offload(tmp_path: Path) -> None:
    counter = ApproximateCounter()
    output = "\n".join(f"row {i} " + "y" * 60 for i in range(400))
    messages = [UserMessage(content="go"), *tool_turn("call_1", output)]
    config = ContextConfig(tool_result_limit=500)
    prep = await prepare(
        state_of(messages),
        context_window=100_000,
        counter=counter,
        config=config,
        offloader=WorkspaceOffloader(tmp_path),
    )
    result = prep.state.conversation[-1].content[0]
    assert isinstance(result, ToolResultBlock)
    (path,) = (tmp_path / "context_offload").glob("tool_result-call_1-*.txt")
    assert path.read_text() == output
    expected_tail = (
        f"{TRUNCATION_MARKER}\n<system-reminder>The remaining content has been omitted for limited "
        f"context. You can refer to the file in '{path}' for the truncated content if needed."
        "</system-reminder>"
    )
    assert result.text.endswith(expected_tail)
    assert result.text.startswith("row 0 ")
    assert counter.count_text(result.text) <= 500
    (transform,) = prep.manifest.transforms
    assert (transform.kind, transform.target, transform.detail) == (
        "tool_result_truncation",
        "call_1",
        str(path),
    )
    assert transform.tokens_before > 500 >= transform.tokens_after - 8
    # The truncated result is stable: the next step changes nothing more.
    again = await prepare(
        prep.state,
        context_window=100_000,
        counter=counter,
        config=config,
        offloader=WorkspaceOffloader(tmp_path),
    )
    assert again.manifest.transforms == ()
    assert path.read_text() == output


async def test_truncation_without_offloader_has_no_path() -> None:
    messages = [UserMessage(content="go"), *tool_turn("c", "z " * 5000)]
    prep = await prepared(
        messages,
        context_window=100_000,
        config=ContextConfig(tool_result_limit=100),
    )
    text = prep.state.conversation[-1].content[0].text
    assert text.endswith(
        "<<<TRUNCATED>>>\n<system-reminder>The remaining content has been omitted for limited "
        "context.</system-reminder>"
    )


class BrokenOffloader:
    def write(self, relative_path: str, data: bytes) -> str:
        raise OffloadError("disk full")


async def test_failed_offload_keeps_original_for_eviction() -> None:
    big = "q" * 90_000
    messages = [UserMessage(content="go"), *tool_turn("c", big)]
    prep = await prepared(
        messages,
        context_window=1_000_000,
        offloader=BrokenOffloader(),
    )
    assert prep.state.conversation[-1].content[0].text == big
    assert [t.kind for t in prep.manifest.transforms] == ["offload_failed"]
    assert "disk full" in prep.manifest.transforms[0].detail


async def test_eviction_by_characters_with_head_and_tail(tmp_path: Path) -> None:
    big = "HEAD" + "m" * 90_000 + "TAIL"
    messages = [
        UserMessage(content="go"),
        *tool_turn("c1", big),
        *tool_turn("c2", big, name="read_file"),
    ]
    prep = await prepared(
        messages,
        context_window=1_000_000,
        offloader=WorkspaceOffloader(tmp_path),
    )
    evicted = prep.state.conversation[2].content[0].text
    assert evicted.startswith("HEAD") and evicted.endswith("TAIL")
    assert len(evicted) < 4_400
    (evicted_file,) = (tmp_path / "large_tool_results").glob("c1-*.txt")
    assert evicted_file.read_text() == big
    # read_file is excluded by default.
    assert prep.state.conversation[4].content[0].text == big
    assert [str(t) for t in prep.manifest.transforms] == ["tool_result_offload:c1"]


def test_offloader_refuses_paths_outside_workspace(tmp_path: Path) -> None:
    offloader = WorkspaceOffloader(tmp_path / "ws")
    with pytest.raises(OffloadError, match="leaves the workspace"):
        offloader.write("../escape.txt", b"x")
    with pytest.raises(OffloadError, match="absolute"):
        offloader.write("/etc/passwd", b"x")
    assert not (tmp_path / "escape.txt").exists()
    path = offloader.write("a/b.txt", b"ok")
    assert Path(path).read_bytes() == b"ok"
    assert list((tmp_path / "ws" / "a").iterdir()) == [Path(path)]


def test_failed_write_keeps_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    offloader = WorkspaceOffloader(tmp_path)
    offloader.write("f.txt", b"original")
    import os

    def boom(*_: Any) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OffloadError, match="no space"):
        offloader.write("f.txt", b"new")
    assert (tmp_path / "f.txt").read_bytes() == b"original"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def _image(n: int) -> ImageBlock:
    data = base64.b64encode(f"png-{n}".encode()).decode()
    return ImageBlock(source={"type": "base64", "media_type": "image/png", "data": data})


async def test_image_limit_offloads_oldest(tmp_path: Path) -> None:
    messages = [UserMessage(content=(_image(i), TextBlock(text=f"shot {i}"))) for i in range(4)]
    messages = [
        m for pair in zip(messages, [AssistantMessage(content="ok")] * 4, strict=True) for m in pair
    ][:-1]
    config = ContextConfig(max_image_num=2)
    prep = await prepared(
        messages,
        context_window=100_000,
        config=config,
        offloader=WorkspaceOffloader(tmp_path),
    )
    kinds = [type(m.content[0]).__name__ for m in prep.state.conversation[::2]]
    assert kinds == ["HintBlock", "HintBlock", "ImageBlock", "ImageBlock"]
    hint = prep.state.conversation[0].content[0]
    assert isinstance(hint, HintBlock)
    assert "max_image_num=2" in hint.hint and str(tmp_path) in hint.hint
    saved = sorted((tmp_path / "context_offload" / "images").iterdir())
    assert [p.read_bytes() for p in saved] == sorted([b"png-0", b"png-1"])
    # Without an offloader the images are dropped with a hint that says so.
    dropped = await prepared(
        messages,
        context_window=100_000,
        config=ContextConfig(max_image_num=0),
    )
    assert [t.kind for t in dropped.manifest.transforms] == ["image_drop"] * 4
    assert "no longer available" in dropped.state.conversation[0].content[0].hint


def _materials() -> Materials:
    def mat(item: str, category: str, size: int, **kw: Any) -> Material:
        block = ContextBlock.reference(item, "w " * size)
        if kw.get("required"):
            block = block.required()
        if "priority" in kw:
            block = block.with_priority(kw["priority"])
        return Material(f"{category}/{item}", category, category, block)  # type: ignore[arg-type]

    return Materials(
        system=(SystemPart("system_prompt", "sys"),),
        blocks=(
            mat("src_hi", "source", 400, priority=5),
            mat("src_lo", "source", 400, priority=1),
            mat("know", "knowledge", 400),
            mat("mem", "memory", 400),
            mat("must", "source", 400, required=True),
        ),
    )


async def test_budget_omits_memory_then_knowledge_then_low_priority() -> None:
    config = ContextConfig(budget={"max_input_tokens": 520})
    prep = await prepare(
        state_of([UserMessage(content="hi")]),
        context_window=100_000,
        counter=ApproximateCounter(),
        config=config,
        materials=_materials(),
    )
    omitted = [t.target for t in prep.manifest.transforms if t.kind == "omitted_for_budget"]
    assert omitted == ["memory/mem", "knowledge/know", "source/src_lo"]
    kept = {i.id for i in prep.manifest.items}
    assert {"source/must", "source/src_hi", "system/system_prompt"} <= kept
    assert prep.manifest.estimated_input_tokens <= 520


async def test_required_material_is_never_omitted() -> None:
    config = ContextConfig(budget={"max_input_tokens": 200})
    with pytest.raises(ContextBudgetExceeded) as info:
        await prepare(
            state_of([UserMessage(content="hi")]),
            context_window=100_000,
            counter=ApproximateCounter(),
            config=config,
            materials=_materials(),
        )
    manifest = info.value.manifest
    assert manifest is not None and manifest.validation == "budget_exceeded"
    assert "source/must" in {i.id for i in manifest.items}
    assert info.value.input_limit == 200
    assert info.value.estimated_tokens > 200


def _compaction_config(**kw: Any) -> ContextConfig:
    return ContextConfig(trigger_ratio=0.5, reserve_ratio=0.2, context_buffer_ratio=0.1, **kw)


async def _compacted(
    messages: Sequence[UserMessage | AssistantMessage], window: int, **config: Any
) -> tuple[Preparation, list[SummaryRequest]]:
    """``messages`` prepared at ``window`` under the compaction config, with a summarizer that
    keeps every request it is sent (and answers FIELDS)."""
    seen: list[SummaryRequest] = []

    async def summarizer(request: SummaryRequest) -> Mapping[str, Any]:
        seen.append(request)
        return FIELDS

    prep = await prepared(
        messages,
        context_window=window,
        config=_compaction_config(**config),
        summarizer=summarizer,
    )
    return prep, seen


async def test_compaction_summarizes_prefix_and_keeps_tail() -> None:
    messages = session(30, output_chars=400)  # ~3,400 tokens at 4 chars/token
    prep, seen = await _compacted(messages, 4_000)
    assert prep.compaction is not None and prep.compaction.kind == "summary"
    summary = prep.state.summary
    assert summary is not None
    assert summary.text.startswith("<system-info>Here is a summary of your previous work\n")
    assert "# Important Discoveries\nZeroDivisionError in app.py:12" in summary.text
    assert summary.fields == FIELDS
    kept = prep.state.conversation
    # The span's request would not fit the window less the answer: it went in pieces, in
    # order, each request within its limit, each carrying the summary so far.
    pieces = tuple(m for request in seen for m in request.messages)
    assert pieces + kept == tuple(messages)
    cache = TokenCache(ApproximateCounter())
    for request in seen:
        assert request.input_limit is not None
        assert summary_request_tokens(request, cache) <= request.input_limit
    assert all(r.previous_summary is not None for r in seen[1:])
    assert isinstance(kept[0], AssistantMessage)  # a tool pair is never split
    assert prep.request.messages[0].content[0].text == summary.text
    tail_tokens = sum(i.tokens for i in prep.manifest.items if i.placement == "conversation")
    assert tail_tokens <= 0.2 * 4_000
    assert "history_compaction:" in ",".join(prep.manifest.transform_codes)
    assert prep.manifest.totals["summary"] > 0
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit


async def test_a_span_larger_than_the_window_is_summarized_in_pieces_that_fit() -> None:
    # One result of ~10,000 tokens in the span, a 4,000-token window: no single summary request
    # could hold the span. Every request the summarizer gets fits its limit; the pieces cover
    # the span in order, the huge result cut for its request only.
    messages = [
        UserMessage(content="Read the dump."),
        *tool_turn("big", "dump line\n" * 4_000),
        *(m for i in range(12) for m in tool_turn(f"c{i}", f"line {i}\n" + "x" * 400)),
    ]
    prep, seen = await _compacted(messages, 4_000, tool_result_limit=50_000)
    cache = TokenCache(ApproximateCounter())
    assert prep.compaction is not None and len(seen) >= 2
    assert cache.messages(messages) > 4_000
    for request in seen:
        assert request.input_limit is not None
        assert summary_request_tokens(request, cache) <= request.input_limit < 4_000
    sent = [m for request in seen for m in request.messages]
    assert [m.role for m in sent] == [m.role for m in messages[: len(sent)]]
    big = next(
        m
        for m in sent
        if isinstance(m, UserMessage) and m.tool_results and m.tool_results[0].tool_use_id == "big"
    )
    assert TRUNCATION_MARKER in big.tool_results[0].text
    assert prep.state.conversation == tuple(messages[len(sent) :])


async def test_no_compaction_below_trigger() -> None:
    async def never(request: SummaryRequest) -> Mapping[str, Any]:
        raise AssertionError("must not be called")

    state = state_of(session(3))
    prep = await prepare(
        state, context_window=100_000, counter=ApproximateCounter(), summarizer=never
    )
    assert prep.compaction is None and prep.state is state


async def test_instructions_reach_the_summarizer_and_retry_succeeds() -> None:
    calls: list[SummaryRequest] = []

    async def flaky(request: SummaryRequest) -> Mapping[str, Any]:
        calls.append(request)
        if request.attempt == 1:
            raise RuntimeError("overloaded")
        if request.attempt == 2:
            return {"task_overview": "missing the others"}
        return FIELDS

    prep = await prepare(
        state_of(session(30)),
        context_window=4_000,
        counter=ApproximateCounter(),
        config=_compaction_config(),
        summarizer=flaky,
        compaction=CompactionOrder(instructions="keep every path"),
    )
    assert sorted({c.attempt for c in calls}) == [1, 2, 3]
    assert {c.instructions for c in calls} == {"keep every path"}
    assert prep.compaction is not None
    assert prep.compaction.attempts == 3
    assert "overloaded" in prep.compaction.errors[0]
    assert "lacks string fields" in prep.compaction.errors[1]


async def _failing(request: SummaryRequest) -> Mapping[str, Any]:
    raise RuntimeError("model unavailable")


async def test_summary_failure_falls_back_to_truncation() -> None:
    messages = session(30)
    prep = await prepared(
        messages,
        context_window=4_000,
        config=_compaction_config(),
        summarizer=_failing,
    )
    assert prep.compaction is not None and prep.compaction.kind == "truncation"
    assert prep.compaction.attempts == 3
    assert prep.state.summary is not None
    assert prep.state.summary.kind == "truncation"
    assert "earlier messages were removed" in prep.state.summary.text
    codes = [t.kind for t in prep.manifest.transforms]
    assert "summary_failed" in codes and "history_truncation" in codes
    assert len(prep.state.conversation) < len(messages)


async def test_summary_failure_without_fallback_raises_and_leaves_context() -> None:
    state = state_of(session(30))
    with pytest.raises(CompressionError, match="left untouched") as info:
        await prepare(
            state,
            context_window=4_000,
            counter=ApproximateCounter(),
            config=_compaction_config(compression_fallback_to_truncation=False),
            summarizer=_failing,
        )
    assert info.value.manifest is not None
    assert info.value.manifest.validation == "build_failed"
    assert len(state.conversation) == 61


async def test_orphan_tool_result_is_rejected_with_manifest() -> None:
    messages = [UserMessage(content=(ToolResultBlock(tool_use_id="ghost", content="?"),))]
    with pytest.raises(InvalidToolPairs, match="ghost") as info:
        await prepare(state_of(messages), context_window=10_000, counter=ApproximateCounter())
    assert info.value.manifest is not None
    assert info.value.manifest.validation == "invalid_tool_pairs"


async def test_unfinished_call_is_kept_through_compaction() -> None:
    messages = [
        *session(30),
        AssistantMessage(
            content=(
                TextBlock(text="compressing"),
                ToolUseBlock(id="pending", name="CompressContext"),
            )
        ),
    ]
    prep = await prepared(
        messages,
        context_window=4_000,
        config=_compaction_config(),
        summarizer=fixed_summary,
        purpose="compaction",
        compaction=CompactionOrder(force=True),
    )
    assert prep.state.conversation[-1] == messages[-1]
    assert prep.compaction is not None
    # A reasoning request cannot carry it: the call has no result.
    with pytest.raises(InvalidToolPairs, match="pending"):
        await prepare(state_of(messages), context_window=100_000, counter=ApproximateCounter())


async def test_latest_turn_is_kept_and_truncated_if_it_must_be() -> None:
    messages = [*session(10), *tool_turn("huge", "h" * 40_000)]
    prep = await prepared(
        messages,
        context_window=8_000,
        config=_compaction_config(),
        summarizer=fixed_summary,
    )
    assert prep.state.conversation[0] == messages[-2]
    assert prep.state.conversation[-1].content[0].tool_use_id == "huge"
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit


async def test_message_trigger_and_keep_messages() -> None:
    config = ContextConfig(compaction={"trigger_messages": 10, "keep_messages": 4, "prune": None})
    prep = await prepare(
        state_of(session(6)),
        context_window=1_000_000,
        counter=ApproximateCounter(),
        config=config,
        summarizer=fixed_summary,
    )
    assert prep.compaction is not None
    assert len(prep.state.conversation) == 4
    assert isinstance(prep.state.conversation[0], AssistantMessage)


async def test_truncate_args_pass() -> None:
    long_arg = "p" * 3_000
    messages = [UserMessage(content="go")]
    for i in range(15):
        messages += tool_turn(f"c{i}", "ok", arg=long_arg)
    config = ContextConfig(
        compaction={"truncate_args": {"trigger_messages": 25, "keep_messages": 4}}
    )
    prep = await prepare(
        state_of(messages), context_window=1_000_000, counter=ApproximateCounter(), config=config
    )
    truncated = [t.target for t in prep.manifest.transforms if t.kind == "args_truncation"]
    assert truncated == [f"c{i}" for i in range(13)]
    first = prep.state.conversation[1].content[0]
    assert first.input["cmd"] == "p" * 20 + "... [argument truncated] ..."
    assert prep.state.conversation[-2].content[0].input["cmd"] == long_arg


async def test_prune_frees_old_output_before_summarizing() -> None:
    messages = session(12, output_chars=40_000)  # ~10k tokens each
    config = ContextConfig(
        compaction={"prune": {"protect_tokens": 30_000, "minimum_prunable_tokens": 20_000}}
    )

    async def never(request: SummaryRequest) -> Mapping[str, Any]:
        raise AssertionError("pruning should have been enough")

    prep = await prepared(
        messages,
        context_window=150_000,
        config=config,
        summarizer=never,
    )
    pruned = [t for t in prep.manifest.transforms if t.kind == "tool_output_prune"]
    assert [t.target for t in pruned] == [f"call_{i}" for i in range(10)]
    assert "older tool output pruned" in prep.state.conversation[2].content[0].text
    assert prep.state.conversation[-1] == messages[-1]


async def test_usage_notice_past_the_buffer_line() -> None:
    config = ContextConfig(compression_tool_enabled=True)
    prep = await prepare(
        state_of(session(30)), context_window=6_000, counter=ApproximateCounter(), config=config
    )
    assert prep.compaction is None
    assert prep.manifest.thresholds["notice_tokens"] < prep.manifest.estimated_input_tokens
    notice = [i for i in prep.manifest.items if i.kind == "notice"]
    assert notice and notice[0].placement == "transient"
    assert "CompressContext" in prep.request.messages[-1].content[0].text
    quiet = await prepare(
        state_of(session(1)), context_window=100_000, counter=ApproximateCounter(), config=config
    )
    assert not [i for i in quiet.manifest.items if i.kind == "notice"]


async def test_manifest_frames_and_diff() -> None:
    counter = ApproximateCounter()
    first = await prepare(state_of(session(2)), context_window=100_000, counter=counter)
    second = await prepare(
        first.state.append(*tool_turn("new", "fresh output")),
        context_window=100_000,
        counter=counter,
        previous=first.manifest,
    )
    assert second.manifest.diff is not None
    assert len(second.manifest.diff.added) == 2 and second.manifest.diff.removed == ()
    frame = second.manifest.items_frame()
    assert list(frame.columns) == [
        "id",
        "kind",
        "placement",
        "tokens",
        "content_hash",
        "source_id",
        "revision",
        "role",
        "blocks",
    ]
    assert len(frame) == len(second.manifest.items)
    assert frame["tokens"].sum() == second.manifest.estimated_input_tokens
    truncated = await prepare(
        state_of(session(1, output_chars=4_000)),
        context_window=100_000,
        counter=counter,
        config=ContextConfig(tool_result_limit=50),
    )
    transforms = truncated.manifest.transforms_frame()
    assert transforms.loc[0, "code"] == "tool_result_truncation:call_0"
    assert transforms.loc[0, "tokens_before"] > transforms.loc[0, "tokens_after"]
    data = truncated.manifest.to_dict()
    assert data["totals"]["conversation"] > 0 and data["validation"] == "passed"


async def test_extractive_summarizer_keeps_paths_and_errors() -> None:
    messages = [
        UserMessage(content="Fix the crash in src/app/models.py"),
        AssistantMessage(
            content=(
                ToolUseBlock(id="a", name="bash", input={"command": "pytest tests/test_models.py"}),
            )
        ),
        UserMessage(
            content=(
                ToolResultBlock(
                    tool_use_id="a", content="E   ZeroDivisionError: division by zero\nFAILED 1"
                ),
            )
        ),
    ]
    fields = await extractive_summarizer(
        SummaryRequest(messages=tuple(messages), previous_summary=None, schema={}, prompt="")
    )
    assert "src/app/models.py" in fields["task_overview"]
    assert "ZeroDivisionError: division by zero" in fields["important_discoveries"]
    assert "$ pytest tests/test_models.py" in fields["context_to_preserve"]
    assert "tests/test_models.py" in fields["context_to_preserve"]


async def test_incremental_steps_match_a_cold_preparation(tmp_path: Path) -> None:
    """Reusing the previous step's scan gives exactly what a fresh cache computes."""
    warm = ApproximateCounter()
    config = ContextConfig(
        tool_result_limit=300, max_image_num=1, trigger_ratio=0.6, reserve_ratio=0.2
    )
    messages = session(20, output_chars=900)
    messages[4] = UserMessage(content=(*messages[4].content, _image(1)))
    messages[10] = UserMessage(content=(*messages[10].content, _image(2)))
    state = WorkingState()
    offloader = WorkspaceOffloader(tmp_path)
    for index, message in enumerate(messages):
        state = state.append(message)
        if isinstance(message, AssistantMessage) or index % 2:
            continue
        hot = await prepare(
            state,
            context_window=6_000,
            counter=warm,
            config=config,
            summarizer=fixed_summary,
            offloader=offloader,
        )
        cold = await prepare(
            state,
            context_window=6_000,
            counter=ApproximateCounter(),
            config=config,
            summarizer=fixed_summary,
            offloader=offloader,
        )
        assert hot.manifest.items == cold.manifest.items
        assert hot.manifest.transform_codes == cold.manifest.transform_codes
        assert hot.manifest.estimated_input_tokens == cold.manifest.estimated_input_tokens
        assert hot.state.conversation == cold.state.conversation
        state = hot.state


def test_working_state_append_equals_a_validated_state() -> None:
    from ctxlab import Summary

    state = WorkingState(summary=Summary(text="s"), revision=3)
    grown = state.append(UserMessage(content="a"), UserMessage(content="b"))
    validated = WorkingState.model_validate(
        {"conversation": grown.conversation, "summary": state.summary, "revision": 4}
    )
    assert grown == validated
    assert grown.model_dump() == validated.model_dump()
    assert grown.model_dump_json() == validated.model_dump_json()
    assert WorkingState.model_validate_json(grown.model_dump_json()) == grown
    assert grown.model_fields_set == {"conversation", "summary", "revision"}
    with pytest.raises(ValidationError):
        grown.revision = 9  # still frozen


async def test_a_turn_too_large_in_its_own_input_is_cut_for_the_summary_request_only() -> None:
    # A call whose input is a whole file (~8,000 tokens), no result large: the turn is cut in
    # its input for the request; the conversation is not touched.
    write = AssistantMessage(
        content=(
            ToolUseBlock(
                id="w", name="Write", input={"file_path": "a.py", "content": "x = 1\n" * 5_000}
            ),
        )
    )
    messages = [
        UserMessage(content="Write the file."),
        write,
        UserMessage(content=(ToolResultBlock(tool_use_id="w", content="written"),)),
        *(m for i in range(8) for m in tool_turn(f"c{i}", f"line {i}\n" + "x" * 400)),
    ]
    prep, seen = await _compacted(messages, 6_000, tool_result_limit=50_000)
    cache = TokenCache(ApproximateCounter())
    assert prep.compaction is not None and seen
    for request in seen:
        assert request.input_limit is not None
        assert summary_request_tokens(request, cache) <= request.input_limit
    cut = next(
        m
        for r in seen
        for m in r.messages
        if isinstance(m, AssistantMessage) and m.tool_uses and m.tool_uses[0].id == "w"
    )
    assert "[... cut here for the summary request]" in cut.tool_uses[0].input["content"]
    assert write.tool_uses[0].input["content"] == "x = 1\n" * 5_000  # the original is whole


def test_a_summary_request_never_starts_with_an_assistant_turn() -> None:
    from ctxlab.models import summary_model_request

    piece = (
        AssistantMessage(content=(ToolUseBlock(id="a", name="bash", input={"cmd": "ls"}),)),
        UserMessage(content=(ToolResultBlock(tool_use_id="a", content="x"),)),
    )
    request = summary_model_request(
        SummaryRequest(piece, None, ContextConfig().summary_schema, "Summarize."), None
    )
    assert request.messages[0].role == "user"
    assert request.messages[1:3] == (piece[0], request.messages[2])
    assert "Summarize." in request.messages[-1].content[-1].text  # type: ignore[union-attr]
