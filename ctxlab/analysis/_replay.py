"""Replay: run the pipeline over a recorded session, step by step, without calling a model.

A recorded conversation is fed as a live session would be: at every reasoning boundary (before
each assistant message) the pipeline prepares a request from the committed working state plus the
messages that arrived since, and its candidate state is committed. Swap the config to see how
another setting would have budgeted the same work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import PreparationError, UsageError
from ctxlab.manifest import STEP_COLUMNS, ContextManifest, StepRow, step_row
from ctxlab.materials import Materials, SystemPart
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline import (
    Offloader,
    Preparation,
    PreparationMemo,
    Summarizer,
    extractive_summarizer,
    prepare,
)
from ctxlab.pipeline._compaction import CompactionRecord
from ctxlab.retention import UserLines, compaction_retention, retention_columns
from ctxlab.tokens import TokenCache, TokenCounter
from ctxlab.util._checks import context_window as context_window_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReplayStep", "compare_configs", "replay", "replay_row"]


@dataclass(frozen=True)
class ReplayStep:
    """One prepared request of a replay."""

    index: int
    """Index of the assistant message this request produced in the recording (a message index,
    not a request number: print `number` for that)."""
    manifest: ContextManifest
    compaction: CompactionRecord | None
    state: WorkingState
    number: int = 0
    """This request's number in the replay, from 0: the plot's x, the step tables' ``step``."""
    request: ModelRequest | None = field(default=None, repr=False, compare=False)
    """The request as prepared (what a model would be sent): the Lab's panels show it. A
    what-if keeps its steps without it (the manifest and state say what it held)."""


async def replay(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    context_window: int,
    counter: TokenCounter | TokenCache,
    config: ContextConfig | None = None,
    system: str = "",
    summarizer: Summarizer | None = extractive_summarizer,
    materials: Materials | None = None,
    max_output_tokens: int | None = None,
    tools: Sequence[ToolSchema] = (),
    offloader: Offloader | None = None,
) -> AsyncIterator[ReplayStep]:
    """Prepare a request at every reasoning boundary of ``messages``, committing as an agent would.

    ``max_output_tokens`` is the response size the recorded agent asked for (it reserves room
    when larger than the budget policy's reservation); ``tools`` are its tool schemas (counted
    in every request, as the recorded agent's were: a transcript's ``tools``); ``offloader``
    stores what truncation and eviction take out, as an agent's workspace would (without one,
    a cut result says it was cut and names no file).

    Yields one `ReplayStep` per assistant message after the first user message (assistant
    messages before it cannot be requested: no request may start with one). Raises the first
    `PreparationError`.
    """
    context_window = context_window_of(context_window)
    if materials is None:
        materials = Materials(system=(SystemPart("system_prompt", system),) if system else ())
    state = WorkingState()
    # One cache and one memo for the whole replay: each step pays only for what is new.
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    memo = PreparationMemo()
    # The previous step's assistant message and the user messages since: appended in one go.
    pending: list[UserMessage | AssistantMessage] = []
    previous: ContextManifest | None = None
    # No request can start with an assistant turn: a recording that begins with one (a
    # continued session, an export that lost the prompt) replays from its first user message.
    start = next((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), len(messages))
    # What the steps will send is known ahead — every message before the last assistant turn
    # (what follows it is never requested) — so it is counted in one batch, or read from the
    # cache's store when another run counted it; each step then finds its messages counted.
    last = max((i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)), default=0)
    cache.count_ahead(messages[start:last])
    requests = 0
    reader = UserLines()  # the user's lines, read once along the replay for every compaction
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, UserMessage):
            pending.append(message)
            continue
        if pending:
            state = state.append(*pending)
        pending = []
        prep: Preparation = await prepare(
            state,
            context_window=context_window,
            counter=cache,
            config=config,
            materials=materials,
            summarizer=summarizer,
            previous=previous,
            request_id=f"step-{index}",
            memo=memo,
            max_output_tokens=max_output_tokens,
            tools=tools,
            offloader=offloader,
        )
        previous = prep.manifest
        record = prep.compaction
        if record is not None:
            # Graded on the recording's original messages (before truncation and offload),
            # by an extractor the summarizer never uses.
            kept = compaction_retention(messages[start:index], state, prep.state, reader=reader)
            record = dataclasses.replace(record, retention=kept)
        state = prep.state
        yield ReplayStep(index, prep.manifest, record, state, requests, prep.request)
        requests += 1
        pending.append(message)


def replay_row(step: ReplayStep, number: int) -> StepRow:
    """The step table's row (`step_row`) of replayed request ``number``, with the compaction it
    made and that compaction's retention."""
    record = step.compaction
    kept = retention_columns(record)
    return step_row(
        step.manifest,
        step=number,
        compaction=record.method if record else None,
        compacted_messages=record.messages_compacted if record else 0,
        retention=kept["retention"],
        retention_control=kept["retention_control"],
    )


async def compare_configs(
    messages: Sequence[UserMessage | AssistantMessage],
    configs: Mapping[str, ContextConfig],
    *,
    context_window: int,
    counter: TokenCounter | TokenCache,
    system: str = "",
    summarizer: Summarizer | None = extractive_summarizer,
    max_output_tokens: int | None = None,
    tools: Sequence[ToolSchema] = (),
) -> pd.DataFrame:
    """Replay ``messages`` under each named config; one row per (config, step), side by side.

    Columns: ``config``, ``index`` (the assistant message the request produced), then the step
    table's (`STEP_COLUMNS`, the Lab's own): tokens by placement, ``total``, the lines,
    ``validation``, transforms counted by effect, ``compaction`` (``summary``/``truncation`` or
    empty) and ``compacted_messages``. A preparation that fails stops that config's replay with a
    last row whose ``validation`` says why.
    """
    import pandas as pd

    if not configs:
        msg = "pass at least one named config, e.g. {'default': ContextConfig()}"
        raise UsageError(msg)
    rows: list[dict[str, Any]] = []
    for name, config in configs.items():
        step = 0
        try:
            async for replayed in replay(
                messages,
                context_window=context_window,
                counter=counter,
                config=config,
                system=system,
                summarizer=summarizer,
                max_output_tokens=max_output_tokens,
                tools=tools,
            ):
                entry = replay_row(replayed, step)
                rows.append({"config": name, "index": replayed.index, **entry})
                step += 1
        except PreparationError as exc:
            if exc.manifest is not None:
                rows.append({"config": name, "index": -1, **step_row(exc.manifest, step=step)})
    return pd.DataFrame(rows, columns=["config", "index", *STEP_COLUMNS])
