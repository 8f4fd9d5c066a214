from __future__ import annotations

import pytest
from pydantic import ValidationError

from ctxlab import ContextConfig
from ctxlab.config._config import DEFAULT_SUMMARY_SCHEMA, SUMMARY_FIELDS


def test_defaults_follow_the_reference() -> None:
    config = ContextConfig()
    assert config.trigger_ratio == 0.8
    assert config.reserve_ratio == 0.1
    assert config.max_image_num == 5
    assert config.context_buffer_ratio == 0.2
    assert config.compression_tool_enabled is False
    assert config.compression_fallback_to_truncation is True
    assert tuple(config.summary_schema["required"]) == SUMMARY_FIELDS
    assert config.summary_fields == SUMMARY_FIELDS
    assert config.tool_result_eviction.max_result_chars == 80_000
    assert config.tool_result_eviction.preview_chars == 2_000
    assert config.tool_result_eviction.eviction_path == "large_tool_results"
    assert "read_file" in config.tool_result_eviction.excluded_tools
    assert config.compaction.prune is not None
    assert config.compaction.prune.protect_tokens == 40_000
    assert config.compaction.truncate_args is None


def test_buffer_not_below_trigger_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"context_buffer_ratio \(0.8\) must be smaller"):
        ContextConfig(trigger_ratio=0.8, context_buffer_ratio=0.8)


def test_trigger_ratio_is_capped_at_0_9() -> None:
    assert ContextConfig(trigger_ratio=0.9).trigger_ratio == 0.9
    with pytest.raises(ValidationError) as info:
        ContextConfig(trigger_ratio=0.95)
    assert info.value.errors()[0]["loc"] == ("trigger_ratio",)
    assert "less than or equal to 0.9" in str(info.value)


def test_reserve_must_stay_below_trigger() -> None:
    with pytest.raises(ValidationError, match="reserve_ratio"):
        ContextConfig(trigger_ratio=0.3, context_buffer_ratio=0.1, reserve_ratio=0.4)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"tool_result_limit": 0}, "tool_result_limit"),
        ({"max_image_num": -1}, "max_image_num"),
        ({"budget": {"max_input_tokens": -5}}, "budget.max_input_tokens"),
        ({"tool_result_eviction": {"max_result_chars": 100, "preview_chars": 60}}, "preview_chars"),
        ({"compaction": {"max_summary_attempts": 0}}, "compaction.max_summary_attempts"),
        ({"summary_schema": {"type": "string"}}, "summary_schema"),
        ({"summary_template": "{nope}"}, "summary_template"),
        ({"trigger_ratio": "high"}, "trigger_ratio"),
        ({"unknown_field": 1}, "unknown_field"),
    ],
)
def test_invalid_values_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        ContextConfig(**kwargs)
    text = str(info.value)
    assert field.split(".")[-1] in text


def test_merge_validates_and_keeps_nested_values() -> None:
    config = ContextConfig(budget={"max_input_tokens": 24_000})
    merged = config.merge(trigger_ratio=0.6, budget={"safety_margin": 100})
    assert merged.trigger_ratio == 0.6
    assert merged.budget.max_input_tokens == 24_000
    assert merged.budget.safety_margin == 100
    with pytest.raises(ValidationError, match="context_buffer_ratio"):
        config.merge(trigger_ratio=0.2)


def test_custom_schema_and_template() -> None:
    schema = {
        "type": "object",
        "properties": {"goal": {"type": "string"}, "done": {"type": "string"}},
        "required": ["goal"],
    }
    config = ContextConfig(summary_schema=schema, summary_template="Goal: {goal} / {done}")
    assert config.summary_fields == ("goal",)
    assert DEFAULT_SUMMARY_SCHEMA["required"] == list(SUMMARY_FIELDS)


def test_thresholds() -> None:
    lines = ContextConfig().thresholds(100_000)
    assert lines == {"notice_tokens": 60_000, "trigger_tokens": 80_000, "reserve_tokens": 10_000}


def test_a_broken_rule_between_fields_reads_as_the_sentence() -> None:
    with pytest.raises(ValidationError) as info:
        ContextConfig(trigger_ratio=0.5, context_buffer_ratio=0.6)
    message = info.value.errors()[0]["msg"]
    assert message.startswith("context_buffer_ratio (0.6) must be smaller than trigger_ratio")
    with pytest.raises(ValidationError) as info:
        ContextConfig(tool_result_eviction={"max_result_chars": 100, "preview_chars": 60})
    assert info.value.errors()[0]["msg"].startswith("tool_result_eviction.preview_chars (60)")
