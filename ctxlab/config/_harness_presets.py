"""Presets for the coding harnesses' own context policies — Claude Code, Codex, Gemini CLI — so
that a session can be replayed under the tool's own rules beside ctxlab's. Each factory names its
public source (repository, file, commit or version range) and says what maps to what; the
constants below are the sources' own numbers. None of these harnesses tells the model its context
usage: ``context_buffer_ratio`` is 0, so no usage notice (nor the room kept for one) moves the
trigger off the source's line.

Claude Code publishes no source: its numbers are its CHANGELOG's version boundary and the
constants that third parties read out of its published package (named, with the version read).
"""

from __future__ import annotations

from collections.abc import Callable

from ctxlab.config._config import ContextConfig
from ctxlab.config._sections import (
    BudgetPolicy,
    ClearToolUses,
    CompactionPasses,
    ProviderEdits,
    ToolResultEviction,
)

__all__ = ["HARNESS_PRESETS", "claude_code_trigger", "codex_trigger", "gemini_cli_trigger"]

CLAUDE_CODE_SUMMARY_OUTPUT = 20_000
"""Claude Code's ``MAX_OUTPUT_TOKENS_FOR_SUMMARY`` (``services/compact/autoCompact.ts`` of the
published 2.1.x package): the room kept for the summary, ``min(model's max output, 20,000)``."""
CLAUDE_CODE_BUFFER = 13_000
"""Claude Code's ``AUTOCOMPACT_BUFFER_TOKENS``: auto-compact fires this far below the effective
window (the window less the summary's room)."""
CLAUDE_CODE_WARNING_BUFFER = 20_000
"""Claude Code's ``WARNING_THRESHOLD_BUFFER_TOKENS``: the warning line, this far below the
auto-compact line, where its microcompact clears old tool results."""
CLAUDE_CODE_OLD_OUTPUT = 32_000
"""Claude Code's default ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` before 2.1.21, which it reserved whole
(the fix in 2.1.21: "auto-compact triggering too early on models with large output token
limits")."""
CLAUDE_CODE_KEPT_RESULTS = 5
"""Tool results Claude Code's microcompact keeps whole (the most recent)."""
CLAUDE_CODE_CLEARED = "[Old tool result content cleared]"
"""What Claude Code's microcompact writes in place of a cleared tool result."""
CODEX_SHARE = 0.9
"""Codex's auto-compact limit as a share of the model's context window: ``(context_window * 9)
/ 10`` (``codex-rs/protocol/src/openai_models.rs``, ``ModelInfo::auto_compact_token_limit``)."""
GEMINI_CLI_THRESHOLD = 0.5
"""Gemini CLI's ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD`` (``model.compressionThreshold``)."""
GEMINI_CLI_OLD_THRESHOLD = 0.7
"""Gemini CLI's ``COMPRESSION_TOKEN_THRESHOLD`` before the service moved to ``context/``."""
GEMINI_CLI_PRESERVE = 0.3
"""Gemini CLI's ``COMPRESSION_PRESERVE_THRESHOLD``: the latest 30 % of the history is kept."""


def claude_code_trigger(context_window: int, *, before_2_1_21: bool = False) -> int:
    """Where Claude Code auto-compacts in a ``context_window``: the window less the summary's
    room (``min(max output, 20,000)``; the whole 32,000 before 2.1.21) less 13,000."""
    room = CLAUDE_CODE_OLD_OUTPUT if before_2_1_21 else CLAUDE_CODE_SUMMARY_OUTPUT
    return context_window - room - CLAUDE_CODE_BUFFER


def codex_trigger(context_window: int) -> int:
    """Where Codex auto-compacts with no ``model_auto_compact_token_limit`` set."""
    return context_window * 9 // 10


def gemini_cli_trigger(context_window: int, *, threshold: float = GEMINI_CLI_THRESHOLD) -> int:
    """Where Gemini CLI compresses: ``threshold`` × the model's token limit."""
    return round(threshold * context_window)


def _claude_code(output_room: int) -> ContextConfig:
    """Claude Code's auto-compact at ``window − output_room − 13,000`` — ctxlab's input limit with
    that reservation and margin, the trigger's 0.9 cap above it up to a 330,000-token window —
    and its microcompact at the warning line of a 200,000-token window."""
    auto = 200_000 - output_room - CLAUDE_CODE_BUFFER
    return ContextConfig(
        trigger_ratio=0.9,
        context_buffer_ratio=0,
        budget=BudgetPolicy(output_reservation=output_room, safety_margin=CLAUDE_CODE_BUFFER),
        compaction=CompactionPasses(keep_messages=1, prune=None, flush_before_compact=False),
        tool_result_eviction=ToolResultEviction(enabled=False),
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(
                trigger_input_tokens=auto - CLAUDE_CODE_WARNING_BUFFER,
                keep=CLAUDE_CODE_KEPT_RESULTS,
                placeholder=CLAUDE_CODE_CLEARED,
            )
        ),
    )


def _claude_code_current() -> ContextConfig:
    """Claude Code 2.1.21 and later (read from its CHANGELOG, github.com/anthropics/claude-code
    ``CHANGELOG.md`` at 5cfc0a19, and from the constants of ``services/compact/autoCompact.ts``
    in the published 2.1.x package as third parties read them, e.g. the v2.1.68 "Compaction
    deep dive" gist of sam-saffron-jarvis): auto-compact when a request passes the window less
    ``min(max output, 20,000)`` less 13,000 — 167,000 of a 200,000-token window — summarizing
    everything before the latest turn. Its microcompact, at the warning line 20,000 below
    (147,000 of 200,000), clears all but the latest 5 tool results: here Anthropic-style
    clearing of the request at that line (it counts for a 200,000-token window; the auto-compact
    line follows any window up to 330,000 tokens, then the 0.9 cap). The idle variant (results
    cleared after an hour's pause) and the 1M windows (967,000) are not modelled."""
    return _claude_code(CLAUDE_CODE_SUMMARY_OUTPUT)


def _claude_code_2_0() -> ContextConfig:
    """Claude Code 2.0.0 to 2.1.20: as ``claude_code``, but the whole default output allowance
    (32,000 tokens) was reserved before the buffer — 155,000 of a 200,000-token window (about
    78 %, the figure decodeclaude.com read out of v2.1.17); read from the CHANGELOG of
    github.com/anthropics/claude-code, 2.1.21: "Fixed auto-compact
    triggering too early on models with large output token limits"."""
    return _claude_code(CLAUDE_CODE_OLD_OUTPUT)


def _codex() -> ContextConfig:
    """Codex (read from github.com/openai/codex ``codex-rs``; ``protocol/src/openai_models.rs`` at
    0d4367d0, ``ModelInfo::auto_compact_token_limit``): with no ``model_auto_compact_token_limit``
    configured it compacts past ``(context_window * 9) / 10`` — 244,800 of gpt-5's 272,000 —
    ctxlab's 0.9 ratio. Its compacted history is the user messages (the latest, up to 20,000
    tokens) followed by the summary (``core/src/compact.rs``): here every user message of the
    compacted span is pinned beside the summary, and the latest turn stays whole. Earlier
    ``codex-rs`` (``core/src/openai_model_info.rs`` at 15667625) compacted at a fixed 256,000
    tokens: set ``compaction.trigger_tokens`` for that."""
    return ContextConfig(
        trigger_ratio=CODEX_SHARE,
        context_buffer_ratio=0,
        compaction=CompactionPasses(
            keep_messages=1, prune=None, flush_before_compact=False, pin_user_messages=True
        ),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


def _gemini_cli(threshold: float) -> ContextConfig:
    # The latest 30 % of a history at the threshold is 0.3 × threshold of the window.
    return ContextConfig(
        trigger_ratio=threshold,
        reserve_ratio=round(GEMINI_CLI_PRESERVE * threshold, 4),
        context_buffer_ratio=0,
        compaction=CompactionPasses(prune=None, flush_before_compact=False),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


def _gemini_cli_current() -> ContextConfig:
    """Gemini CLI (read from github.com/google-gemini/gemini-cli, ``packages/core/src/context/
    chatCompressionService.ts`` at 1bbee037): compresses when the history passes
    ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD`` = 0.5 of the model's token limit (the setting
    ``model.compressionThreshold``), summarizing all but the latest 30 % of the history
    (``COMPRESSION_PRESERVE_THRESHOLD``, by characters, cut at a user message): here a kept tail
    of 0.15 of the window (30 % of a history at half of it)."""
    return _gemini_cli(GEMINI_CLI_THRESHOLD)


def _gemini_cli_0_7() -> ContextConfig:
    """Gemini CLI before the threshold became 0.5 (read from github.com/google-gemini/gemini-cli, 2025:
    ``packages/core/src/core/client.ts``, then ``services/chatCompressionService.ts``, with
    ``COMPRESSION_TOKEN_THRESHOLD = 0.7``; the release that changed it is not pinned here — by
    02b2885c the services file holds 0.5): compression past 0.7 of the token limit, the latest
    30 % kept (0.21 of the window here)."""
    return _gemini_cli(GEMINI_CLI_OLD_THRESHOLD)


HARNESS_PRESETS: dict[str, Callable[[], ContextConfig]] = {
    "claude_code": _claude_code_current,
    "claude_code_2.0": _claude_code_2_0,
    "codex": _codex,
    "gemini_cli": _gemini_cli_current,
    "gemini_cli_0.7": _gemini_cli_0_7,
}
"""The harnesses' presets by name; ``config/_presets.py`` adds them to `PRESETS`."""
