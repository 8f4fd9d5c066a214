"""Where a recording's own compactions really fired: for each one, what the provider billed
at the boundary — the last request before it, whole (input, cache reads and writes) and with
its answer — beside the threshold the tool documents for the version that wrote it
(`ctxlab.io._compaction_thresholds`, with their sources), and the difference (users report
thresholds that do not match what fires: claude-code #61334, codex #16068).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.analysis._recorded import RecordedCompaction, RecordedRequest, recorded_requests
from ctxlab.io import Transcript
from ctxlab.io._arguments import checked_transcript
from ctxlab.io._compaction_thresholds import (
    FAR_FROM_THRESHOLD,
    ToolThreshold,
    documented_threshold,
    window_of,
)
from ctxlab.util._checks import context_window as checked_window
from ctxlab.util._checks import sequence_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FAR_FROM_THRESHOLD",
    "CompactionSite",
    "ToolThreshold",
    "compaction_sites",
    "documented_threshold",
    "sites_frame",
    "sites_in",
]


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

    @property
    def sentence(self) -> str:
        """Where it fired against the threshold, in words (what the Lab's hover says)."""
        if self.billed_context is None:
            return "no bill before it: where it fired is not known"
        fired = f"fired at {self.billed_context:,} billed tokens"
        if self.threshold is None or self.difference is None:
            return f"{fired}; no documented threshold for {self.tool or 'its tool'} {self.version or '(version not recorded)'}"
        said = (
            f"{fired}; {self.tool} {self.version} documents {self.threshold:,} "
            f"({self.difference:+,})"
        )
        return f"{said}: far from its documented threshold" if self.far else said


def compaction_sites(
    transcript: Transcript, *, context_window: int | None = None
) -> list[CompactionSite]:
    """Every compaction (not a microcompact) the recording holds, with the bill at its boundary
    and the threshold its tool documents (``context_window``: the model's, when the recording
    does not say; Claude's are known)."""
    transcript = checked_transcript(transcript, "compaction_sites")
    if context_window is not None:
        context_window = checked_window(context_window)
    tool = transcript.meta.get("source")
    return sites_in(
        recorded_requests(transcript), tool if isinstance(tool, str) else None, context_window
    )


def sites_in(
    requests: Sequence[RecordedRequest], tool: str | None, context_window: int | None = None
) -> list[CompactionSite]:
    """`compaction_sites` of a recording's requests as recorded (``requests``: its
    `recorded_requests`, already made — a Lab's recorded view reads the same pass) written by
    ``tool`` (the transcript's ``meta["source"]``)."""
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
    window = context_window or window_of(model)
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

    checked = sequence_of(sites, CompactionSite, "sites", "a list of CompactionSite")
    rows = [{**s.__dict__, "far": s.far} for s in checked]
    columns = [*CompactionSite.__dataclass_fields__, "far"]
    return pd.DataFrame(rows, columns=columns)
