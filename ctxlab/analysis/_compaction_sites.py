"""Where a recording's own compactions really fired: for each one, what the provider billed
at the boundary — the last request before it, whole (input, cache reads and writes) and with
its answer — beside the threshold the tool documents for the version that wrote it, and the
difference (users report thresholds that do not match what fires: claude-code #61334, codex
#16068).

The thresholds, each with its source (a tool's own code is the specification of its policy):

- **Claude Code** 2.1: auto-compact at the model's window less the summary's output
  reservation (``min(max output, 20,000)``: 20,000 for every current model) less a 13,000-token
  buffer — 167,000 of a 200,000 window. ``services/compact/autoCompact.ts``
  (``getAutoCompactThreshold``, ``AUTOCOMPACT_BUFFER_TOKENS = 13_000``,
  ``MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000``), as the 2.1 source map shows it. It compares
  the last response's usage — input, cache reads and writes, and output — plus an estimate of
  what came after: ``billed_context`` here.
- **Codex**: 90 % of the model's context window (a configured
  ``model_auto_compact_token_limit`` can only lower it): ``codex-rs/protocol/src/
  openai_models.rs``, ``auto_compact_token_limit``.
- **Gemini CLI**: ``compressionThreshold`` 0.5 of the model's token limit:
  ``packages/core/src/services/chatCompressionService.ts``,
  ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD``.

A version outside a known range, a tool without a row, or a model whose window is not known
gives no threshold (None), never another's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.analysis._recorded import RecordedCompaction, RecordedRequest, recorded_requests
from ctxlab.io import Transcript
from ctxlab.models._anthropic_limits import context_window_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FAR_FROM_THRESHOLD",
    "THRESHOLDS",
    "CompactionSite",
    "ToolThreshold",
    "compaction_sites",
    "documented_threshold",
    "sites_frame",
]

FAR_FROM_THRESHOLD = 0.10
"""A compaction fired *far* from its threshold when the billed context differs from it by more
than this share of it (the Lab marks those)."""


@dataclass(frozen=True)
class ToolThreshold:
    """The auto-compaction threshold a tool documents for a range of its versions."""

    tool: str
    """The transcript's ``source`` (``claude_code``, ``codex``, ``gemini_cli``)."""
    versions: tuple[tuple[int, ...], tuple[int, ...] | None]
    """The first version it holds for and the first it no longer does (None: still)."""
    rule: str
    """The rule in words."""
    source: str
    """Where it is read from."""
    at: Callable[[int], int]
    """The threshold at a context window."""

    def holds_for(self, version: str | None) -> bool:
        """Whether ``version`` is in the range (an unknown version is in none)."""
        parsed = _version(version)
        if parsed is None:
            return False
        first, stop = self.versions
        return parsed >= first and (stop is None or parsed < stop)


THRESHOLDS: tuple[ToolThreshold, ...] = (
    ToolThreshold(
        "claude_code",
        ((2, 1), (2, 2)),
        "window − min(max output, 20,000) − 13,000",
        "Claude Code services/compact/autoCompact.ts (getAutoCompactThreshold), 2.1",
        lambda window: window - 20_000 - 13_000,
    ),
    ToolThreshold(
        "codex",
        ((0,), None),
        "90 % of the context window (model_auto_compact_token_limit can lower it)",
        "codex-rs/protocol/src/openai_models.rs (auto_compact_token_limit)",
        lambda window: window * 9 // 10,
    ),
    ToolThreshold(
        "gemini_cli",
        ((0,), None),
        "compressionThreshold 0.5 × the model's token limit",
        "gemini-cli packages/core/src/services/chatCompressionService.ts "
        "(DEFAULT_COMPRESSION_TOKEN_THRESHOLD)",
        lambda window: window // 2,
    ),
)
"""The documented thresholds, by tool and version range."""


def _version(text: str | None) -> tuple[int, ...] | None:
    # "2.1.39" → (2, 1, 39); a suffix ("-beta") is ignored, anything else is unknown.
    if not isinstance(text, str) or not text:
        return None
    parts: list[int] = []
    for piece in text.strip().lstrip("v").split("."):
        digits = "".join(c for c in piece.split("-")[0] if c.isdigit())
        if not digits or digits != piece.split("-")[0]:
            return tuple(parts) if parts else None
        parts.append(int(digits))
    return tuple(parts)


def documented_threshold(
    tool: str | None, version: str | None, context_window: int | None
) -> tuple[int, ToolThreshold] | None:
    """The threshold ``tool`` documents for ``version`` at ``context_window``, with its row
    (None when no row holds or the window is unknown)."""
    if context_window is None:
        return None
    for row in THRESHOLDS:
        if row.tool == tool and row.holds_for(version):
            return row.at(context_window), row
    return None


@dataclass(frozen=True)
class CompactionSite:
    """One recorded compaction, located against its documented threshold."""

    number: int
    """Its rank among the recording's compactions, from 0."""
    trigger: str
    """``auto``, ``manual``, or what the recording called it."""
    tool: str | None
    version: str | None
    """The tool's version that wrote it (None: not recorded)."""
    model: str | None
    """The model of the last request before it."""
    context_window: int | None
    billed_input: int | None
    """The last request before it, as billed: input + cache reads + cache writes (None: not
    recorded)."""
    billed_context: int | None
    """``billed_input`` and that request's output: the context the next request starts from."""
    pre_tokens: int | None
    """What the recording says the context held (Claude Code's ``preTokens``)."""
    threshold: int | None
    difference: int | None
    """``billed_context − threshold`` (negative: it fired below)."""
    source: str
    """Where the threshold is documented ("" without one)."""

    @property
    def far(self) -> bool:
        """Whether an automatic compaction fired more than `FAR_FROM_THRESHOLD` of the
        threshold away from it (a manual one is not governed by the threshold)."""
        if self.difference is None or not self.threshold or self.trigger == "manual":
            return False
        return abs(self.difference) > FAR_FROM_THRESHOLD * self.threshold


def compaction_sites(
    transcript: Transcript, *, context_window: int | None = None
) -> list[CompactionSite]:
    """Every compaction (not a microcompact) the recording holds, with the bill at its boundary
    and the threshold its tool documents (``context_window``: the model's, when the recording
    does not say; Claude's are known)."""
    tool = transcript.meta.get("source")
    tool = tool if isinstance(tool, str) else None
    requests = recorded_requests(transcript)
    out: list[CompactionSite] = []
    for position, request in enumerate(requests):
        for compaction in request.compactions:
            if compaction.kind != "compact":
                continue
            before = requests[position - 1] if position else None
            out.append(_site(len(out), compaction, before, tool, context_window))
    return out


def _site(
    number: int,
    compaction: RecordedCompaction,
    before: RecordedRequest | None,
    tool: str | None,
    context_window: int | None,
) -> CompactionSite:
    usage = before.usage if before is not None else None
    model = before.model if before is not None else None
    billed = (
        None
        if usage is None
        else usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    # Claude's windows are known by name; another model's only when the caller says.
    claude = model is not None and model.startswith("claude-")
    window = context_window or (context_window_of(model) if claude and model else None)
    found = documented_threshold(tool, compaction.version, window)
    context = None if billed is None or usage is None else billed + usage.output_tokens
    threshold = found[0] if found else None
    return CompactionSite(
        number=number,
        trigger=compaction.trigger,
        tool=tool,
        version=compaction.version,
        model=model,
        context_window=window,
        billed_input=billed,
        billed_context=context,
        pre_tokens=compaction.pre_tokens,
        threshold=threshold,
        difference=None if context is None or threshold is None else context - threshold,
        source=found[1].source if found else "",
    )


def sites_frame(sites: list[CompactionSite]) -> pd.DataFrame:
    """``sites`` as a table, one row each, with ``far``."""
    import pandas as pd

    rows = [{**s.__dict__, "far": s.far} for s in sites]
    columns = [*CompactionSite.__dataclass_fields__, "far"]
    return pd.DataFrame(rows, columns=columns)
