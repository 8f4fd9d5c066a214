"""The compaction events of a ctxlab run or replay: at every prepared request, the evaluation
of the compaction trigger — fired or not — with the threshold in force, the tokens by placement
before and after, and what the compaction's summary call cost when the caller knows it.

One vocabulary for the exports that carry them: ATIF's extension fields
(`ctxlab.io.formats.atif.export`) and OpenTelemetry span events (`ctxlab.io.formats.otel.export`), and the
otel importer reads them back (`ctxlab.io.formats.otel.compactions`).

The pipeline compacts when the request's total (every placement) passes the trigger
(``trigger_ratio × context_size``), when the message trigger fires, or when asked. A
`CompactionRecord` gives the summary and conversation tokens before and after; the other
placements are the request's own (``manifest.totals``). The record does not split the tokens
before between the old summary and the conversation, so both sides report them together as
``history`` (summary + conversation) beside each other placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from ctxlab.manifest import PLACEMENTS, CompactionTrigger, ContextManifest
from ctxlab.pipeline._record import CompactionRecord

__all__ = ["EVENT_FIELDS", "HISTORY", "PreparedStep", "compaction_events"]

Reason = Literal["tokens", "messages"]
"""Why an automatic compaction fired: the request's total passed the trigger line, or it did
not (the message trigger, or a forced compaction)."""

HISTORY = "history"
"""The summary and the conversation together: what compaction works on."""

_OTHER = tuple(p for p in PLACEMENTS if p not in ("summary", "conversation"))

EVENT_FIELDS = (
    "request",
    "reply",
    "request_id",
    "purpose",
    "fired",
    "trigger",
    "reason",
    "asked",
    "threshold_tokens",
    "context_size",
    "total_before",
    "total_after",
    "tokens_before",
    "tokens_after",
    "method",
    "messages_compacted",
    "summary_cost_usd",
)
"""The fields of one event, in order (`compaction_events`)."""


@runtime_checkable
class PreparedStep(Protocol):
    """A prepared request of a run or replay: `ctxlab.replay`'s steps, a what-if's."""

    @property
    def manifest(self) -> ContextManifest:
        """The request's manifest."""
        ...

    @property
    def compaction(self) -> CompactionRecord | None:
        """The compaction its preparation made, if any."""
        ...


def compaction_events(
    steps: Sequence[PreparedStep], *, summary_costs: Mapping[int, float] | None = None
) -> list[dict[str, Any]]:
    """One event per prepared request whose trigger was evaluated (its manifest has the
    thresholds in force, or it compacted): its number (``request``) and the message index of
    the reply it was prepared for (``reply``: a replay's steps say it; None otherwise);
    ``fired``; ``trigger`` in ctxlab's vocabulary
    (`CompactionTrigger`: ``automatic`` at a reasoning request, ``manual`` for
    ``compress_context()`` or the CompressContext tool, ``overflow`` for an overflow's retry,
    ``on_demand`` when a rule of ``ContextConfig.on_demand`` asked for it); for an automatic
    compaction that fired, its ``reason`` (`Reason`), for one asked for, the rule that
    asked (``asked``); the threshold and window, the request's total and tokens by placement before and after (`HISTORY`), and, when it fired,
    the method, the messages compacted and ``summary_cost_usd`` (from ``summary_costs``, by
    request number: None when not given)."""
    costs = summary_costs or {}
    events: list[dict[str, Any]] = []
    for number, step in enumerate(steps):
        manifest, record = step.manifest, step.compaction
        if manifest.thresholds is None and record is None:
            continue  # a request prepared with no window: no trigger to evaluate
        event = _event(number, manifest, record, costs.get(number))
        reply = getattr(step, "index", None)  # a replay's step names its reply's message
        event["reply"] = reply if isinstance(reply, int) and not isinstance(reply, bool) else None
        events.append({name: event[name] for name in EVENT_FIELDS})
    return events


def _event(
    number: int, manifest: ContextManifest, record: CompactionRecord | None, cost: float | None
) -> dict[str, Any]:
    totals = manifest.totals
    after = {p: totals[p] for p in _OTHER} | {HISTORY: totals["summary"] + totals["conversation"]}
    before = dict(after)
    if record is not None:
        before[HISTORY] = record.tokens_before
    thresholds = manifest.thresholds
    threshold = thresholds.trigger_tokens if thresholds is not None else None
    total_before = sum(before.values())
    return {
        "request": number,
        "request_id": manifest.request_id,
        "purpose": manifest.purpose,
        "fired": record is not None,
        "trigger": _trigger(manifest, record),
        "reason": _reason(manifest, record, total_before, threshold),
        "asked": record.asked if record is not None else None,
        "threshold_tokens": threshold,
        "context_size": thresholds.context_size if thresholds is not None else None,
        "total_before": total_before,
        "total_after": sum(after.values()),
        "tokens_before": before,
        "tokens_after": after,
        "method": record.method if record is not None else None,
        "messages_compacted": record.messages_compacted if record is not None else 0,
        "summary_cost_usd": cost if record is not None else None,
    }


def _trigger(manifest: ContextManifest, record: CompactionRecord | None) -> CompactionTrigger:
    # ctxlab's vocabulary of what starts a compaction (`CompactionEvent.trigger`): the agent
    # prepares an overflow's retry as "recovery", compress_context() and the CompressContext
    # tool as "compaction" (the manifest does not tell those two apart); a compaction an
    # on-demand rule asked for says so on its record.
    if record is not None and record.asked is not None:
        return "on_demand"
    if manifest.purpose == "recovery":
        return "overflow"
    return "manual" if manifest.purpose == "compaction" else "automatic"


def _reason(
    manifest: ContextManifest,
    record: CompactionRecord | None,
    total_before: int,
    threshold: int | None,
) -> Reason | None:
    if record is None or manifest.purpose != "reasoning" or record.asked is not None:
        return None
    if threshold is not None and total_before > threshold:
        return "tokens"
    return "messages"
