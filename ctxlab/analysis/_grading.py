"""Retention graded on demand: a replay's compactions graded after the replay, when a figure
that needs them is asked for, with the figures grading during the replay gave (the same
function on the same inputs: the recording's original messages from the first request on, the
summary the state before the compaction held, the state after it).

A compaction's grade reads only the messages before its request and the states around it, so
grading can wait: the replay's steps, the plot and the headline figures never do."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxlab.messages import AssistantMessage, UserMessage, request_start
from ctxlab.messages._state import WorkingState
from ctxlab.retention import UserLines, compaction_retention
from ctxlab.retention._measure import request_text
from ctxlab.retention._next_use import REPLIES, NextUse, next_use

if TYPE_CHECKING:
    from ctxlab.analysis._replay import ReplayStep
    from ctxlab.pipeline._compaction import CompactionRecord

__all__ = ["graded_record", "graded_steps", "next_use_of"]

Message = UserMessage | AssistantMessage


def graded_record(
    record: CompactionRecord,
    originals: Sequence[Message],
    before: WorkingState,
    after: WorkingState,
    reader: UserLines,
) -> CompactionRecord:
    """``record`` with its retention: graded on the recording's ``originals`` (before truncation
    and offload) by an extractor the summarizer never uses; ``before`` is the working state the
    compacting request was prepared from (only its summary is read), ``after`` the state it made."""
    kept = compaction_retention(originals, before, after, reader=reader)
    return dataclasses.replace(record, retention=kept)


def graded_steps(steps: Sequence[ReplayStep], messages: Sequence[Message]) -> list[ReplayStep]:
    """``steps`` (a replay of ``messages`` made with ``grade=False``, in order from its first
    request) with every compaction graded, as `replay` grades them when it grades as it goes."""
    start = request_start(messages)
    reader = UserLines()  # the user's lines, read once along the session for every compaction
    before = WorkingState()
    out: list[ReplayStep] = []
    for step in steps:
        record = step.compaction
        if record is not None and record.retention is None:
            # The state the request was prepared from holds the previous step's summary (what
            # arrived since was appended, never summarized).
            record = graded_record(record, messages[start : step.index], before, step.state, reader)
            step = dataclasses.replace(step, compaction=record)
        out.append(step)
        before = step.state
    return out


def next_use_of(
    steps: Sequence[ReplayStep],
    messages: Sequence[Message],
    system: str = "",
    *,
    replies: int = REPLIES,
) -> list[NextUse]:
    """Every compaction of ``steps`` (a replay of ``messages``, graded or not) graded by the
    recorded agent's next ``replies`` replies, up to the next compaction, against the request
    the config built: ``system``, the summary and the kept messages as sent
    (`ctxlab.retention._next_use`)."""
    at = [s for s in steps if s.compaction is not None]
    out: list[NextUse] = []
    for n, step in enumerate(at):
        end = at[n + 1].index if n + 1 < len(at) else None
        summary = step.state.summary
        request = request_text(step.state.conversation, system, summary.text if summary else "")
        out.append(
            next_use(
                messages,
                step.index,
                request,
                step=step.number,
                end=end,
                system=system,
                replies=replies,
            )
        )
    return out
