"""`ContextConfig`: every setting of the preparation pipeline, validated.

The top-level field names and meanings are those of the ratio-triggered compression reference
(``trigger_ratio``, ``reserve_ratio``, ...). The nested sections configure the harness stages:
the request budget, large-tool-result eviction and the light compaction passes.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ctxlab.config._export import Exported
from ctxlab.config._export_frameworks import export_config
from ctxlab.config._html import config_html
from ctxlab.config._import import config_from
from ctxlab.config._on_demand import OnDemandCompaction
from ctxlab.config._sections import (
    BudgetPolicy,
    CompactionPasses,
    ProviderEdits,
    ToolResultEviction,
    rule_broken,
)
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import context_window as context_window_of
from ctxlab.util._checks import finite, shown

__all__ = [
    "DEFAULT_COMPRESSION_PROMPT",
    "DEFAULT_SUMMARY_SCHEMA",
    "DEFAULT_SUMMARY_TEMPLATE",
    "ContextConfig",
    "require_config",
]

SUMMARY_FIELDS = (
    "task_overview",
    "current_state",
    "important_discoveries",
    "next_steps",
    "context_to_preserve",
)

DEFAULT_SUMMARY_SCHEMA: dict[str, Any] = {
    "title": "ContextSummary",
    "type": "object",
    "properties": {
        "task_overview": {
            "type": "string",
            "description": "The user's request and the goal of the work, with its constraints.",
        },
        "current_state": {
            "type": "string",
            "description": "What is done, what is in progress, and the state of files and tools.",
        },
        "important_discoveries": {
            "type": "string",
            "description": "Findings, failed runs and whether a later run passed, decisions.",
        },
        "next_steps": {
            "type": "string",
            "description": "The concrete actions that remain, in order.",
        },
        "context_to_preserve": {
            "type": "string",
            "description": "Paths, commands, identifiers, numbers and exact strings to keep.",
        },
    },
    "required": list(SUMMARY_FIELDS),
}
"""The five-field summary schema."""

DEFAULT_SUMMARY_TEMPLATE = (
    "<system-info>Here is a summary of your previous work\n"
    "# Task Overview\n{task_overview}\n\n"
    "# Current State\n{current_state}\n\n"
    "# Important Discoveries\n{important_discoveries}\n\n"
    "# Next Steps\n{next_steps}\n\n"
    "# Context to Preserve\n{context_to_preserve}"
    "</system-info>"
)
"""How a summary is shown to the model: ``str.format`` over the summary's fields."""

DEFAULT_COMPRESSION_PROMPT = (
    "<system-hint>The conversation above is about to be replaced by a summary, so that you can "
    "continue the task in a fresh context window. Write it as a handover a person could "
    "continue from: concise and actionable, filling every field of the schema.\n"
    "Include: the task first (if you shorten it, say how much you left out); every later "
    "instruction of the user, verbatim; each file changed, with the lines before and after that "
    "differ (or a unified diff); each command run, whole, with its outcome; every failed run "
    "with its failing tests and errors (a few, and how many more) — fixed only when a later run "
    "of the same command passed, else not yet fixed with its last failure; the todo list with "
    "statuses; next steps as whole sentences from what you meant to do next.\n"
    "Make every reference self-contained: paths, symbols, identifiers, URLs, commands and error "
    "messages verbatim, never 'this file' or 'the error above'; absolute dates. Do not quote "
    "directory listings or long outputs; never cut a word. Carry an earlier summary's content "
    "forward.</system-hint>"
)
"""The instruction that asks the model for a summary."""


PRESET_FACTORIES: dict[str, Callable[[], ContextConfig]] = {}
"""Preset name → factory, for `ContextConfig.preset`: filled by ``config/_presets.py`` when the
package loads (the presets build ContextConfigs, so this module cannot import them)."""


class ContextConfig(BaseModel):
    """Settings of the context pipeline. Invalid values raise a pydantic ``ValidationError``
    (a ``ValueError``) naming the field and the rule.

    Example::

        ContextConfig(trigger_ratio=0.8, reserve_ratio=0.1, tool_result_limit=3000)
    """

    # Field docstrings become the fields' descriptions: the Config panel shows them.
    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True
    )

    trigger_ratio: float = Field(default=0.8, gt=0, le=0.9, title="Trigger ratio")
    """Compress when the request's tokens exceed this ratio of the model's context size. At
    most 0.9: the rest of the window is left for the summary request itself."""
    reserve_ratio: float = Field(default=0.1, gt=0, lt=0.9, title="Reserve ratio")
    """Proportion of the context size kept as recent messages after compression; must be
    smaller than ``trigger_ratio``."""
    tool_result_limit: int = Field(
        default=50_000, gt=0, title="Tool result limit", json_schema_extra={"ui_max": 10_000_000}
    )
    """Maximum tokens per tool result; longer results keep a head and end with a marker."""
    max_image_num: int = Field(
        default=5, ge=0, title="Max images", json_schema_extra={"ui_max": 1000}
    )
    """Maximum number of images kept in the context; the oldest beyond it are offloaded or
    dropped and replaced by a hint. 0 keeps no image."""
    context_buffer_ratio: float = Field(default=0.2, ge=0, le=1, title="Context buffer ratio")
    """The band below ``trigger_ratio`` in which the agent is told its context usage and may
    compress by itself; must be smaller than ``trigger_ratio``."""
    compression_tool_enabled: bool = Field(default=False, title="CompressContext tool")
    """Offer the ``CompressContext`` tool so the agent chooses when to compress."""
    compression_fallback_to_truncation: bool = Field(default=True, title="Fall back to truncation")
    """When summarization fails: drop the oldest messages and leave a note (True), or raise
    and leave the context untouched (False)."""
    compression_prompt: str = Field(default=DEFAULT_COMPRESSION_PROMPT, min_length=1)
    """The instruction that asks the model for the summary."""
    summary_template: str = Field(default=DEFAULT_SUMMARY_TEMPLATE, min_length=1)
    """``str.format`` template showing the summary to the model, over the schema's fields."""
    summary_schema: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_SUMMARY_SCHEMA))
    """JSON Schema of the structured summary (an object of string fields)."""

    budget: BudgetPolicy = BudgetPolicy()
    """How the input limit is derived (output reservation, safety margin, explicit cap)."""
    tool_result_eviction: ToolResultEviction = ToolResultEviction()
    """Character-based offload of very large tool results (needs a workspace offloader)."""
    compaction: CompactionPasses = CompactionPasses()
    """Message triggers, the kept tail by message count, and the light passes."""
    provider_edits: ProviderEdits | None = None
    """A provider's own context editing (Anthropic's tool-result and thinking clearing),
    reproduced on each request sent — never on the working state (off by default)."""
    on_demand: OnDemandCompaction | None = None
    """Compaction on demand: the application asks for a summary by its own rules (a new task,
    a number of requests, a token mark, a pause) beside the trigger (off by default)."""

    @field_validator("summary_schema")
    @classmethod
    def _schema_is_object(cls, schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties")
        if schema.get("type") != "object" or not isinstance(properties, dict) or not properties:
            msg = "summary_schema must be a JSON Schema with type 'object' and 'properties'"
            raise ValueError(msg)
        return schema

    @model_validator(mode="after")
    def _ratios_and_template(self) -> ContextConfig:
        if self.context_buffer_ratio >= self.trigger_ratio:
            msg = (
                f"context_buffer_ratio ({self.context_buffer_ratio}) must be smaller than "
                f"trigger_ratio ({self.trigger_ratio}), so that the agent is warned before the "
                "hard compression threshold"
            )
            raise rule_broken(msg)
        if self.reserve_ratio >= self.trigger_ratio:
            msg = (
                f"reserve_ratio ({self.reserve_ratio}) must be smaller than trigger_ratio "
                f"({self.trigger_ratio}), or a compaction could not shrink the context"
            )
            raise rule_broken(msg)
        idle = self.compaction.idle_ratio
        if idle is not None and not self.reserve_ratio < idle <= self.trigger_ratio:
            msg = (
                f"compaction.idle_ratio ({idle}) must be above reserve_ratio "
                f"({self.reserve_ratio}), or a compaction could not shrink the context, and at "
                f"most trigger_ratio ({self.trigger_ratio}), where compaction happens anyway"
            )
            raise rule_broken(msg)
        names = {name for _, name, _, _ in string.Formatter().parse(self.summary_template) if name}
        unknown = names - set(self.summary_schema["properties"])
        if unknown:
            msg = (
                f"summary_template uses {sorted(unknown)}, which summary_schema does not define "
                f"(its fields: {sorted(self.summary_schema['properties'])})"
            )
            raise rule_broken(msg)
        return self

    @property
    def summary_fields(self) -> tuple[str, ...]:
        """The fields a summary must fill: the schema's required fields (or all properties)."""
        required = self.summary_schema.get("required")
        if isinstance(required, list) and required:
            return tuple(str(name) for name in required)
        return tuple(self.summary_schema["properties"])

    def _repr_html_(self) -> str:
        return config_html(self)

    @classmethod
    def preset(cls, name: str) -> ContextConfig:
        """A named starting point, each from a public source its docstring cites:
        ``ctxlab``, ``agentscope`` (002), ``harness`` (the reference Java harness, 000),
        ``langchain`` (``SummarizationMiddleware``), ``observation_masking`` (JetBrains,
        arXiv 2508.21433), ``anthropic_context_editing`` and ``anthropic_compaction`` (the
        Messages API's own context management), ``openai_agents_trimmer`` (the OpenAI Agents
        SDK's ``ToolOutputTrimmer``), ``openai_truncation`` and ``openai_compaction``, and the
        coding harnesses' own auto-compaction: ``claude_code`` (2.1.21 and later),
        ``claude_code_2.0``, ``codex``, ``gemini_cli`` and ``gemini_cli_0.7``. See
        ``ctxlab/config/_presets.py`` and ``_harness_presets.py``."""
        factory = PRESET_FACTORIES.get(name) if isinstance(name, str) else None
        if factory is None:
            msg = f"no preset {shown(name)}; choose one of {', '.join(PRESET_FACTORIES)}"
            raise UsageError(msg)
        return factory()

    def export(
        self, target: str, *, model: Any = None, context_window: int | None = None
    ) -> Exported:
        """This config in ``target``'s terms, with what the target cannot express in
        ``dropped``: ``"anthropic"`` — the Messages API's ``context_management``;
        ``"pydantic_ai"`` — its ``AnthropicModelSettings`` with the edits;
        ``"langchain"`` — a list of LangChain agent middleware (its ``SummarizationMiddleware``
        needs ``model``, the chat model that summarizes; ``context_window`` turns the ratios
        into token counts, which a model without a profile needs); ``"inspect"`` — an Inspect
        AI compaction strategy; ``"openai_agents"`` — an Agents SDK ``RunConfig``."""
        if context_window is not None:
            context_window = context_window_of(context_window)
        return export_config(self, target, model, context_window)

    @classmethod
    def from_(
        cls,
        value: Any,
        target: str = "anthropic",
        *,
        context_window: int | None = None,
        model: str | None = None,
    ) -> ContextConfig:
        """The nearest config to a ``target`` setting — an Anthropic ``context_management``
        dict (``model``, the Claude model it is sent to, decides what no thinking edit means:
        claude-sonnet-4-6's default when omitted), a list of LangChain agent middleware
        (``"langchain"``; a kept tail of tokens needs ``context_window``), an Inspect AI
        compaction strategy (``"inspect"``; a fractional threshold needs ``context_window``) —
        to replay what runs today under ctxlab. A key, a value or a setting the target does
        not take, or that ctxlab cannot express, is a `UsageError` naming it."""
        if context_window is not None:
            context_window = context_window_of(context_window)
        return config_from(cls, value, target, context_window, model)

    def merge(self, **overrides: Any) -> ContextConfig:
        """A new config with ``overrides`` applied and validated (nested sections take dicts)."""
        data = self.model_dump()
        for key, value in overrides.items():
            if (
                isinstance(value, dict)
                and isinstance(data.get(key), dict)
                and key
                in (
                    "budget",
                    "tool_result_eviction",
                    "compaction",
                )
            ):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return type(self).model_validate(data)

    def with_idle_compaction(self, ratio: float | None = None) -> ContextConfig:
        """This config, compacting while idle too: after a pause longer than the prompt
        cache's lifetime, at ``ratio`` of the context size (``compaction.idle_ratio``; None:
        three quarters of ``trigger_ratio``, at least just above ``reserve_ratio``)."""
        if ratio is None:
            lowest = min(self.reserve_ratio + 0.01, self.trigger_ratio)
            ratio = round(max(0.75 * self.trigger_ratio, lowest), 4)
        elif (
            isinstance(ratio, bool)
            or not isinstance(ratio, int | float)
            or not finite(ratio)
            or not self.reserve_ratio < ratio <= self.trigger_ratio
        ):
            msg = (
                f"ratio must be a share of the context above reserve_ratio ({self.reserve_ratio})"
                f" and at most trigger_ratio ({self.trigger_ratio}), got {shown(ratio)}"
            )
            raise UsageError(msg)
        return self.merge(compaction={"idle_ratio": ratio})

    def thresholds(self, context_size: int) -> dict[str, int]:
        """Token lines for a context size: the usage notice, the trigger and the kept tail."""
        context_size = context_window_of(context_size, "context_size")
        return {
            "notice_tokens": int((self.trigger_ratio - self.context_buffer_ratio) * context_size),
            "trigger_tokens": int(self.trigger_ratio * context_size),
            "reserve_tokens": int(self.reserve_ratio * context_size),
        }


def named_configs(configs: object, *, validate: bool = True) -> dict[str, ContextConfig]:
    """``configs`` (name → `ContextConfig`) with each config checked (`require_config`, the
    message naming the config; not when ``validate`` is False: a sweep makes an invalid config
    its rows' error), or a `UsageError` saying what it takes: a list, a text or a config alone
    is not a mapping of names to configs."""
    if not isinstance(configs, Mapping) or not configs:
        msg = (
            "configs must name each config, e.g. {'default': ContextConfig(), 'eager': "
            f"ContextConfig(trigger_ratio=0.5)}}, got {shown(configs)}"
        )
        raise UsageError(msg)
    named: dict[str, ContextConfig] = {}
    for name, config in configs.items():
        if not isinstance(name, str):
            msg = f"each config's name must be text, got {shown(name)} (of {shown(configs)})"
            raise UsageError(msg)
        if not validate:
            named[name] = config
            continue
        try:
            named[name] = require_config(config)
        except UsageError as exc:
            msg = f"config {name!r}: {exc}"
            raise UsageError(msg) from exc
    return named


def require_config(value: object) -> ContextConfig:
    """``value`` if it is a valid `ContextConfig` (or its validated copy, when it was built
    without validation but holds valid values); a `UsageError` naming what is wrong otherwise.

    The config is validated again here: ``model_copy(update=...)`` and ``model_construct`` skip
    validation, and a config that breaks the rules must not reach a preparation.
    """
    if not isinstance(value, ContextConfig):
        msg = f"context_config must be a ContextConfig, got {type(value).__name__}"
        raise UsageError(msg)
    try:
        checked = type(value).model_validate(value.model_dump(warnings=False))
    except Exception as exc:  # a ValidationError, or a value that cannot even be dumped
        errors = exc.errors() if isinstance(exc, ValidationError) else [{"msg": str(exc)}]
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())) or 'config'}: {e['msg']}" for e in errors
        )
        msg = (
            f"the context config is invalid ({detail}); it was probably built without "
            "validation (model_copy(update=...) or model_construct). Build it with "
            "ContextConfig(...) or config.merge(...), which check every rule"
        )
        raise UsageError(msg) from exc
    # A bypassed config can hold a plain dict where a section belongs: the checked copy is used.
    return value if checked == value else checked
