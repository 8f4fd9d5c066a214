"""Presets: each validates, cites its source and behaves as its source says."""

from __future__ import annotations

import pytest

from ctxlab import PRESETS, ApproximateCounter, ContextConfig, replay
from ctxlab.config._presets import PRESETS as FACTORIES
from ctxlab.config._sections import CompactionPasses, MaskConfig
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_validates_and_cites_its_source(name: str) -> None:
    config = ContextConfig.preset(name)
    assert ContextConfig.model_validate(config.model_dump()) == config
    doc = FACTORIES[name].__doc__ or ""
    assert any(s in doc for s in ("reference", "arXiv", "langchain", "defaults", "read from")), name


def test_presets_differ_where_their_sources_do() -> None:
    agentscope = ContextConfig.preset("agentscope")
    assert (agentscope.trigger_ratio, agentscope.reserve_ratio) == (0.8, 0.1)
    assert agentscope.tool_result_limit == 3000 and agentscope.compaction.prune is None
    assert ContextConfig.preset("harness").compaction.trigger_messages == 50
    assert ContextConfig.preset("langchain").compaction.keep_messages == 20
    masking = ContextConfig.preset("observation_masking")
    assert masking.compaction.mask is not None and masking.compaction.mask.keep_turns == 10
    with pytest.raises(ValueError, match="no preset 'nope'; choose one of ctxlab"):
        ContextConfig.preset("nope")


async def test_observation_masking_hides_old_outputs_and_never_summarizes() -> None:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Inspect the logs.")]
    for n in range(15):
        use = ToolUseBlock(id=f"c{n}", name="read", input={"path": f"log{n}.txt"})
        messages.append(AssistantMessage(content=(use,)))
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=f"line {n}\n" * 50),))
        )
    messages.append(AssistantMessage(content="done"))
    preset = ContextConfig.preset("observation_masking")
    assert preset.compaction.mask is not None and preset.compaction.mask.clear_at_least > 0
    # At every request (no batching), to see the pass itself; batches: the next test.
    config = ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(mask=MaskConfig(keep_turns=10), prune=None),
    )
    steps = [
        s
        async for s in replay(
            messages, context_window=200_000, counter=ApproximateCounter(), config=config
        )
    ]
    assert all(s.compaction is None for s in steps)
    last = steps[-1].state.conversation
    results = [b for m in last if isinstance(m, UserMessage) for b in m.tool_results]
    placeholder = config.compaction.mask.placeholder  # type: ignore[union-attr]
    masked = [r for r in results if r.content == placeholder]
    assert len(masked) == 5  # 15 turns, the latest 10 kept whole
    assert [r.tool_use_id for r in masked] == ["c0", "c1", "c2", "c3", "c4"]
    assert any(t.kind == "observation_mask" for t in steps[-1].manifest.transforms)
    # Masked outputs stay masked, unchanged: the earlier prefix is identical from step to step.
    before = steps[-2].state.conversation
    assert before[:9] == last[:9]


async def test_observation_masking_clears_in_batches_so_the_cached_prefix_holds() -> None:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Inspect the logs.")]
    for n in range(20):
        use = ToolUseBlock(id=f"c{n}", name="read", input={"path": f"log{n}.txt"})
        messages.append(AssistantMessage(content=(use,)))
        text = f"line {n}\n" * 50  # about 100 tokens
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=text),)))
    messages.append(AssistantMessage(content="done"))
    counter = ApproximateCounter()
    per_output = counter.count_text("line 1\n" * 50)
    config = ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(
            mask=MaskConfig(keep_turns=10, clear_at_least=3 * per_output), prune=None
        ),
    )
    steps = [
        s async for s in replay(messages, context_window=200_000, counter=counter, config=config)
    ]
    clears = [
        [t.detail for t in s.manifest.transforms if t.kind == "observation_mask"] for s in steps
    ]
    cleared = [c for c in clears if c]
    # 10 outputs become old over the session; they are cleared three or more at a time, never
    # one per step (which would rewrite the cached prefix at every request).
    assert cleared and all(len(c) >= 3 for c in cleared)
    assert len(cleared) <= 10 // 3
    assert sum(len(c) for c in cleared) >= 9


def test_a_config_is_described_by_its_preset_or_what_differs_from_the_defaults() -> None:
    from ctxlab.config._presets import PRESETS, describe_config

    assert describe_config(ContextConfig()) == "the defaults"
    named = [n for n in PRESETS if ContextConfig.preset(n) != ContextConfig()]
    assert named  # every preset but one equal to the defaults is named as itself
    for name in named:
        assert describe_config(ContextConfig.preset(name)) == f"the preset {name!r}"
    tuned = ContextConfig(trigger_ratio=0.6, reserve_ratio=0.2)
    assert describe_config(tuned) == "trigger_ratio 0.6, reserve_ratio 0.2"
    # A changed section by its name; past four changes, a count.
    many = ContextConfig(
        trigger_ratio=0.6,
        reserve_ratio=0.2,
        tool_result_limit=1_500,
        max_image_num=3,
        compression_tool_enabled=True,
        compaction=CompactionPasses(prune=None),
    )
    assert describe_config(many) == (
        "trigger_ratio 0.6, reserve_ratio 0.2, tool_result_limit 1500, max_image_num 3 and 2 more"
    )
    assert describe_config(ContextConfig(compaction=CompactionPasses(prune=None))) == "compaction"
    prompt = ContextConfig(
        compression_prompt="Summarize the session for the next engineer, please."
    )
    assert describe_config(prompt) == "compression_prompt"  # a prompt by its name, not its text
