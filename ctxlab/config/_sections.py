"""The sections of `ContextConfig`: the request budget, tool-result eviction, argument
truncation, pruning, masking and the light compaction passes — each a frozen model that refuses
unknown fields, with the rules between its own fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "BudgetPolicy",
    "ClearThinking",
    "ClearToolUses",
    "CompactionPasses",
    "MaskConfig",
    "ProviderEdits",
    "PruneConfig",
    "ToolResultEviction",
    "TrimToolOutputs",
    "TruncateArgsConfig",
    "rule_broken",
]


def rule_broken(message: str) -> PydanticCustomError:
    """A broken rule between fields, reported in the ValidationError as the sentence itself.

    (A plain ``ValueError`` would read "Value error, ..." in ``error.errors()[0]["msg"]``.)
    """
    return PydanticCustomError("config_rule", message)


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


class BudgetPolicy(_Section):
    """How the input limit of a request is derived from the model's context window.

    ``input_limit = window − output_reservation − safety_margin``, capped by
    ``max_input_tokens``.
    """

    max_input_tokens: int = Field(default=0, ge=0)
    """An explicit cap on input tokens; 0 derives the limit from the model window."""
    output_reservation: int = Field(default=0, ge=0)
    """Tokens kept free for the response; 0 uses one eighth of the window, at most 4,096."""
    safety_margin: int = Field(default=0, ge=0)
    """Tokens kept free against counting error; 0 uses 2 % of the window (at least 1)."""
    unknown_window_input_limit: int = Field(default=64_000, gt=0)
    """The input limit used when the model's window is unknown."""
    workspace_max_tokens: int = Field(default=8_000, ge=0)
    """000's workspace ``maxContextTokens``: workspace material (AGENTS.md, MEMORY.md, knowledge)
    is cut to this many tokens when prepared; 0 sets no limit. Not the request budget."""


class ToolResultEviction(_Section):
    """Offload of very large tool results by characters, with a head and tail preview.

    Applied before the next request when a workspace offloader is attached; the token-based
    truncation of ``tool_result_limit`` applies after it in every case.
    """

    enabled: bool = True
    """Whether this pass runs."""
    max_result_chars: int = Field(default=80_000, gt=0)
    """Results longer than this many characters are offloaded."""
    preview_chars: int = Field(default=2_000, ge=0)
    """Characters kept from the head and from the tail."""
    eviction_path: str = "large_tool_results"
    """Folder inside the workspace where the full results are written."""
    excluded_tools: tuple[str, ...] = (
        "read_file",
        "write_file",
        "edit_file",
        "memory_search",
        "memory_get",
        "session_search",
    )
    """Tools whose results are never evicted by this pass (prefer paginated reads for them)."""

    @model_validator(mode="after")
    def _preview_fits(self) -> ToolResultEviction:
        if 2 * self.preview_chars >= self.max_result_chars:
            msg = (
                f"tool_result_eviction.preview_chars ({self.preview_chars}) × 2 must be smaller "
                f"than max_result_chars ({self.max_result_chars}), or nothing would be offloaded"
            )
            raise rule_broken(msg)
        return self


class TruncateArgsConfig(_Section):
    """Light pass: shorten long string arguments of old tool calls."""

    trigger_messages: int = Field(default=25, gt=0)
    """Run when the conversation has at least this many messages..."""
    trigger_tokens: int = Field(default=40_000, gt=0)
    """...or at least this many tokens."""
    keep_messages: int = Field(default=20, ge=0)
    """The latest messages are never touched."""
    max_arg_length: int = Field(default=2_000, gt=20)
    """Strings longer than this are eligible; they keep their first 20 characters."""
    truncation_text: str = "... [argument truncated] ..."
    """Appended to a truncated argument."""


class PruneConfig(_Section):
    """Light pass within compaction: replace older tool output by a preview."""

    protect_tokens: int = Field(default=40_000, ge=0)
    """The latest tool output, up to this many tokens, is never pruned."""
    minimum_prunable_tokens: int = Field(default=20_000, ge=0)
    """Pruning runs only when at least this many tokens could be freed."""
    preview_chars: int = Field(default=2_000, ge=0)
    """Characters of each pruned output that stay in context."""


class MaskConfig(_Section):
    """Light pass at every request: observation masking. Tool outputs older than the latest
    ``keep_turns`` assistant turns are replaced by a placeholder; the calls stay, nothing is
    summarized (JetBrains, "The Complexity Trap", arXiv 2508.21433, keeps the latest 10 turns)."""

    keep_turns: int = Field(default=10, ge=1)
    """Tool outputs of the latest this many assistant turns are kept whole."""
    placeholder: str = "[older tool output omitted; re-run the call if it is needed]"
    """What a masked output becomes."""
    clear_at_least: int = Field(default=0, ge=0)
    """Mask only when the outputs due to be masked hold at least this many tokens, then all of
    them at once (Anthropic's ``clear_at_least``): each clear rewrites the cached prefix after
    it, so clearing in batches keeps the prompt cache between clears. 0: at every request."""


class CompactionPasses(_Section):
    """Conversation reduction besides the ratio trigger: message triggers and light passes."""

    enabled: bool = True
    """When False, the conversation is never summarized or truncated automatically."""
    trigger_messages: int | None = Field(default=None, gt=1)
    """Also compact when the conversation has this many messages (off by default)."""
    trigger_tokens: int | None = Field(default=None, ge=0)
    """Compact above this many request tokens when it is below ``trigger_ratio × window``: an
    absolute trigger, as the providers' server compactions have (Anthropic's
    ``compact_20260112``: 150,000). Off by default. (LangChain summarizes *at* its count: its
    ``("tokens", T)`` is ``T - 1`` here, 0 for its ``T = 1``.)"""
    keep_messages: int | None = Field(default=None, gt=0)
    """Keep this many latest messages instead of ``reserve_ratio × context size`` tokens."""
    idle_ratio: float | None = Field(default=None, gt=0, le=0.9)
    """Compact while idle: after a pause longer than the prompt cache's lifetime (the cache has
    expired, so a compaction re-writes nothing a warm cache held), also compact when the
    request passes this ratio of the context size — between ``reserve_ratio`` and
    ``trigger_ratio``. Replays apply it on the recording's clock; a live agent does not yet.
    Off by default (docs/concepts/cost.md, "Compact while idle")."""
    truncate_args: TruncateArgsConfig | None = None
    """Truncation of old tool arguments; off until configured."""
    prune: PruneConfig | None = PruneConfig()
    """Pruning of older tool output before summarizing; None disables it."""
    mask: MaskConfig | None = None
    """Observation masking at every request (off by default; the ``observation_masking``
    preset turns it on)."""
    pin_user_messages: bool = False
    """Keep every user message of the compacted span verbatim beside the summary, not only the
    first (OpenAI's Responses compaction returns "all user messages, followed by a single
    compaction item": openai 3.57.0, ``CompactedResponse.output``). Cut at a line end, as the
    pinned task is, when it would crowd out the latest turn."""
    max_summary_attempts: int = Field(default=3, ge=1, le=10)
    """How many times summarization is tried before the fallback decides."""
    flush_before_compact: bool = True
    """000's ``flushBeforeCompact``: before summarizing, an agent with a workspace writes the
    span's facts (paths, commands, errors) to ``MEMORY.md`` (best effort; see
    ``ctxlab/agent/_memory_flush.py``)."""
    summary_prompt: str | None = None
    """000's custom summary template: the whole summary request, with ``{messages}`` standing
    for the compacted messages as a transcript (None: the conversation prefix followed by
    ``compression_prompt``, which shares the prompt cache)."""

    @field_validator("summary_prompt")
    @classmethod
    def _has_messages(cls, value: str | None) -> str | None:
        if value is not None and "{messages}" not in value:
            msg = "compaction.summary_prompt must contain {messages}, where the history goes"
            raise ValueError(msg)
        return value


class ClearToolUses(_Section):
    """Anthropic's server-side tool-result clearing, ``clear_tool_uses_20250919`` (Messages API
    beta ``context-management-2025-06-27``; fields and defaults read from anthropic 2.14.0,
    ``types/beta/beta_clear_tool_uses_20250919_edit_param.py``, and the context-editing guide),
    reproduced on the request ctxlab sends: when the request exceeds the trigger, the oldest
    tool results — all but the latest ``keep`` tool uses, never those of ``exclude_tools`` —
    become a placeholder, in chronological order; when ``clear_at_least`` is set, only if that
    many tokens can go. The provider applies it to each request from the full history, so
    ctxlab applies it to what is sent, never to the working state."""

    trigger_input_tokens: int | None = Field(default=100_000, gt=0)
    """Fire when the request's input tokens exceed this (the API's default trigger)."""
    trigger_tool_uses: int | None = Field(default=None, gt=0)
    """Fire when the request holds more tool uses than this, instead of on tokens: the API
    takes one trigger, so setting this turns the token trigger off (setting both is refused)."""
    keep: int = Field(default=3, ge=0)
    """The latest this many tool uses keep their results. Counted over every tool use, those
    of ``exclude_tools`` too, as LangChain's port reads the guide (Inspect's counts only the
    clearable ones); the guide does not say which."""
    clear_at_least: int = Field(default=0, ge=0)
    """Clear only when at least this many tokens can be removed (each clear rewrites the cached
    prefix from the first cleared block). 0: whenever it fires."""
    exclude_tools: tuple[str, ...] = ()
    """Tools whose uses are never cleared."""
    clear_tool_inputs: bool | tuple[str, ...] = False
    """Clear the calls' inputs too: all (True) or those of the named tools."""
    placeholder: str = "[tool result cleared by context management]"
    """What a cleared result becomes. The API's own text is not published: a stand-in."""

    @model_validator(mode="before")
    @classmethod
    def _one_trigger(cls, data: object) -> object:
        # The API's edit has one ``trigger``, input tokens or tool uses: a tool-use trigger
        # replaces the default token one rather than firing beside it.
        if not isinstance(data, dict) or data.get("trigger_tool_uses") is None:
            return data
        if data.get("trigger_input_tokens") is not None:
            msg = (
                "clear_tool_uses takes one trigger, as the API does: set trigger_input_tokens "
                f"({data['trigger_input_tokens']}) or trigger_tool_uses "
                f"({data['trigger_tool_uses']}), not both"
            )
            raise rule_broken(msg)
        return {**data, "trigger_input_tokens": None}

    @model_validator(mode="after")
    def _some_trigger(self) -> ClearToolUses:
        if self.trigger_input_tokens is None and self.trigger_tool_uses is None:
            msg = (
                "clear_tool_uses needs a trigger: trigger_input_tokens (the API's default is "
                "100,000) or trigger_tool_uses — without one the API fires at 100,000 tokens"
            )
            raise rule_broken(msg)
        return self


class ClearThinking(_Section):
    """Anthropic's server-side thinking clearing, ``clear_thinking_20251015`` (same beta and
    source as `ClearToolUses`): the thinking blocks of all but the latest ``keep_turns``
    assistant turns are removed from the request (``None``: the API's ``"all"``, nothing
    removed) — a turn being what the assistant does between two messages of the user, a whole
    tool loop. Applied to what is sent, never to the working state."""

    keep_turns: int | None = Field(default=1, ge=1)
    """Assistant turns whose thinking stays (the API's default, 1); None keeps all."""


class TrimToolOutputs(_Section):
    """The OpenAI Agents SDK's ``ToolOutputTrimmer`` (openai-agents 0.24.0,
    ``agents/extensions/tool_output_trimmer.py``), a filter run before each model call: the tool
    outputs before the ``recent_turns``-th user message from the end that are longer than
    ``max_output_chars`` become ``[Trimmed: <tool> output — N chars → P char preview]`` and
    their first ``preview_chars`` characters. Applied to what is sent, never to the session.
    (With one user message and ``recent_turns=2`` nothing is ever old: the SDK counts user
    messages, not tool calls.)"""

    recent_turns: int = Field(default=2, ge=1)
    """User messages from the end whose items are never trimmed."""
    max_output_chars: int = Field(default=500, ge=1)
    """Outputs longer than this are trimmed."""
    preview_chars: int = Field(default=200, ge=0)
    """Characters of a trimmed output kept as its preview."""
    trimmable_tools: tuple[str, ...] | None = None
    """Only these tools' outputs are trimmed (None: every tool's)."""


class ProviderEdits(_Section):
    """Context editing a provider — or the framework around the model — does on each request,
    reproduced by ctxlab on the request it sends, so that replays, what-ifs and sweeps compare
    them with ctxlab's own policies, and the cost model sees the prefix each edit rewrites."""

    clear_tool_uses: ClearToolUses | None = None
    """Anthropic's ``clear_tool_uses_20250919``."""
    clear_thinking: ClearThinking | None = None
    """Anthropic's ``clear_thinking_20251015``."""
    trim_tool_outputs: TrimToolOutputs | None = None
    """The OpenAI Agents SDK's ``ToolOutputTrimmer``."""
    openai_truncation: bool = False
    """The OpenAI Responses API's ``truncation: "auto"`` (openai 3.57.0,
    ``response_create_params.py``): a request over the input limit drops items from the
    beginning of the conversation until it fits — whole turns here, so that no result is sent
    without its call; nothing is summarized."""
