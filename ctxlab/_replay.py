"""Replay: run the pipeline over a recorded session, step by step, without calling a model.

A recorded conversation is fed as a live session would be: at every reasoning boundary (before
each assistant message) the pipeline prepares a request from the committed working state plus the
messages that arrived since, and its candidate state is committed. Swap the config to see how
another setting would have budgeted the same work.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab._config import ContextConfig
from ctxlab._jsonl import json_lines, read_text
from ctxlab._request import ModelRequest, ToolSchema
from ctxlab._state import WorkingState
from ctxlab.exceptions import MessageFormatError
from ctxlab.manifest import ContextManifest, ProviderUsage
from ctxlab.materials import Materials, SystemPart
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.models import messages_from_anthropic
from ctxlab.pipeline import (
    Preparation,
    PreparationMemo,
    Summarizer,
    extractive_summarizer,
    prepare,
)
from ctxlab.pipeline._compaction import CompactionRecord
from ctxlab.retention import compaction_retention, retention_columns
from ctxlab.tokens import TokenCache, TokenCounter

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ReplayStep",
    "Transcript",
    "compare_configs",
    "corpus_dir",
    "load_transcript",
    "replay",
    "usage_by_reply",
]


@dataclass(frozen=True, repr=False)
class Transcript:
    """A recorded session: its metadata, System text and messages (see `ctxlab.load`)."""

    name: str
    meta: dict[str, Any]
    """Where it came from, and what was inferred, repaired or dropped on the way in."""
    system: str
    messages: tuple[UserMessage | AssistantMessage, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    tools: tuple[ToolSchema, ...] = ()
    """The tool schemas, when the source recorded them."""
    usage: dict[int, ProviderUsage] = field(default_factory=dict)
    """The provider's usage, by the index of the assistant message it produced."""

    def __repr__(self) -> str:
        return (
            f"Transcript({self.name!r}, {len(self.messages)} messages, {len(self.tools)} tools, "
            f"usage on {len(self.usage)} steps, source={self.meta.get('source', 'ctxlab')!r})"
        )

    def _repr_html_(self) -> str:
        from ctxlab._html import transcript_html

        return transcript_html(self)

    def save(self, path: str | os.PathLike[str], format: str = "ctxlab") -> Path:
        """Write this transcript as ``ctxlab`` JSONL, an ``anthropic`` request or ``openai``
        messages; `ctxlab.load` reads each back."""
        from ctxlab.io._save import save_transcript

        return save_transcript(self, path, format)  # type: ignore[arg-type]


def usage_by_reply(
    messages: Sequence[UserMessage | AssistantMessage], usages: Sequence[ProviderUsage]
) -> dict[int, ProviderUsage]:
    """The usages of a session's answered requests, in order, placed on the assistant messages
    they produced — only when every reply has one (a missing one would shift the pairing)."""
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    return dict(zip(replies, usages, strict=True)) if len(usages) == len(replies) else {}


def corpus_dir() -> Path:
    """The transcript corpus: ``$CTXLAB_CORPUS``, else ``../shared/corpus``."""
    return Path(os.environ.get("CTXLAB_CORPUS", "../shared/corpus"))


def load_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read a normalized transcript: a JSON meta line, then one Anthropic-style message a line.

    Raises `MessageFormatError` naming the file and line for anything it cannot read.
    """
    path = Path(path)
    decoded = json_lines(path, read_text(path))
    if not decoded:
        msg = f"{path} is empty; expected a meta line and messages"
        raise MessageFormatError(msg)
    (meta_line, meta), raw = decoded[0], decoded[1:]
    if not isinstance(meta, dict) or meta.get("type") != "meta":
        msg = f"{path} line {meta_line}: the first line must be a meta object with type 'meta'"
        raise MessageFormatError(msg)
    return Transcript(
        name=path.stem,
        meta=meta,
        system=_system_text(meta.get("system"), path, meta_line),
        messages=tuple(_messages(raw, path)),
        tools=_meta_tools(meta.get("tools"), path, meta_line),
        usage=_meta_usage(meta.get("usage"), path, meta_line),
    )


def _meta_tools(value: Any, path: Path, line: int) -> tuple[ToolSchema, ...]:
    if not value:
        return ()
    try:
        return tuple(
            ToolSchema(
                str(t["name"]),
                str(t.get("description", "")),
                dict(t.get("input_schema") or {"type": "object"}),
            )
            for t in value
        )
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        msg = f"{path} line {line}: meta.tools must be a list of tool schemas ({exc})"
        raise MessageFormatError(msg) from exc


def _meta_usage(value: Any, path: Path, line: int) -> dict[int, ProviderUsage]:
    # ctxlab writes {message index: [input, output, cache read, cache write]}; older files and
    # other writers may hold another shape there, which is not usage to replay.
    if not isinstance(value, dict):
        return {}
    try:
        return {int(k): ProviderUsage(*(int(x) for x in v)) for k, v in value.items()}
    except (TypeError, ValueError) as exc:
        msg = f"{path} line {line}: meta.usage must map message indexes to four counts ({exc})"
        raise MessageFormatError(msg) from exc


def _system_text(value: Any, path: Path, line: int) -> str:
    # A string, or the Anthropic form: a list of text blocks.
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in value
    ):
        return "\n\n".join(b["text"] for b in value)
    msg = (
        f"{path} line {line}: meta.system must be a string or a list of text blocks, "
        f"got {type(value).__name__}"
    )
    raise MessageFormatError(msg)


def _messages(raw: list[tuple[int, Any]], path: Path) -> list[UserMessage | AssistantMessage]:
    try:
        return messages_from_anthropic(m for _, m in raw)
    except MessageFormatError:
        # Find the line: parse one message at a time (only on the error path).
        for number, message in raw:
            try:
                messages_from_anthropic([message])
            except MessageFormatError as exc:
                msg = f"{path} line {number}: {exc}"
                raise MessageFormatError(msg) from exc
        raise


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
) -> AsyncIterator[ReplayStep]:
    """Prepare a request at every reasoning boundary of ``messages``, committing as an agent would.

    ``max_output_tokens`` is the response size the recorded agent asked for (it reserves room
    when larger than the budget policy's reservation); ``tools`` are its tool schemas (counted
    in every request, as the recorded agent's were: a transcript's ``tools``).

    Yields one `ReplayStep` per assistant message after the first user message (assistant
    messages before it cannot be requested: no request may start with one). Raises the first
    `PreparationError`.
    """
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
    requests = 0
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
        )
        previous = prep.manifest
        record = prep.compaction
        if record is not None:
            # Graded on the recording's original messages (before truncation and offload),
            # by an extractor the summarizer never uses.
            kept = compaction_retention(messages[start:index], state, prep.state)
            record = dataclasses.replace(record, retention=kept)
        state = prep.state
        yield ReplayStep(index, prep.manifest, record, state, requests, prep.request)
        requests += 1
        pending.append(message)


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

    from ctxlab.exceptions import PreparationError
    from ctxlab.manifest import STEP_COLUMNS, step_row

    if not configs:
        msg = "pass at least one named config, e.g. {'default': ContextConfig()}"
        raise ValueError(msg)
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
                record = replayed.compaction
                kept = retention_columns(record)
                entry = step_row(
                    replayed.manifest,
                    step=step,
                    compaction=record.method if record else None,
                    compacted_messages=record.messages_compacted if record else 0,
                    retention=kept["retention"],
                    retention_control=kept["retention_control"],
                )
                rows.append({"config": name, "index": replayed.index, **entry})
                step += 1
        except PreparationError as exc:
            if exc.manifest is not None:
                rows.append({"config": name, "index": -1, **step_row(exc.manifest, step=step)})
    return pd.DataFrame(rows, columns=["config", "index", *STEP_COLUMNS])
