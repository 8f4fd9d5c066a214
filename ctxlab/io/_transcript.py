"""`Transcript`: a recorded session — its metadata, System text, messages, tool schemas and the
provider's usage — and ctxlab's own JSONL form of it (`load_transcript`; `ctxlab.load` reads
every other format into one)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import EMPTY_USAGE
from ctxlab.io._census import Census, holdings
from ctxlab.io._save import save_transcript
from ctxlab.messages import AssistantMessage, ProviderUsage, TextBlock, UserMessage
from ctxlab.messages._request import ToolSchema
from ctxlab.models import messages_from_anthropic
from ctxlab.tokens import preload
from ctxlab.util._html import escape, table_html
from ctxlab.util._jsonl import SessionLines, read_text, session_lines
from ctxlab.util._path_args import path_argument

__all__ = [
    "Transcript",
    "clock_summary",
    "corpus_dir",
    "load_transcript",
    "models_of",
    "read_transcript",
    "usage_by_reply",
]


@dataclass(frozen=True, repr=False)
class Transcript:
    """A recorded session: its metadata, System text and messages (see `ctxlab.load`)."""

    name: str
    meta: dict[str, Any]
    """Where it came from, and what was inferred, repaired or dropped on the way in (its
    ``census``: what the file held and what became of it — `Transcript.census`)."""
    system: str
    messages: tuple[UserMessage | AssistantMessage, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    tools: tuple[ToolSchema, ...] = ()
    """The tool schemas, when the source recorded them."""
    usage: dict[int, ProviderUsage] = field(default_factory=dict)
    """The provider's usage, by the index of the assistant message it produced."""
    times: dict[int, float] = field(default_factory=dict)
    """When each reply was recorded, by the index of the assistant message: POSIX seconds (UTC),
    as the file's own timestamps say — the recording's clock, which the cost model's prompt
    cache expires on. Empty when the file records no time (no clock: the cache is taken as
    always warm, and said so)."""

    def __repr__(self) -> str:
        return (
            f"Transcript({self.name!r}, {len(self.messages)} messages, {len(self.tools)} tools, "
            f"usage on {len(self.usage)} steps, source={self.meta.get('source', 'ctxlab')!r})"
        )

    def _repr_html_(self) -> str:
        return transcript_html(self)

    @property
    def census(self) -> Census | None:
        """What loading read from the file, used and skipped, and what this transcript holds
        (``meta["census"]``); ``str(transcript.census)`` is its one line. None for a
        transcript built in code."""
        return Census.from_meta(self.meta.get("census"))

    @property
    def models(self) -> tuple[str, ...]:
        """The models the recording says answered (``meta["models"]``), in order; what is not
        a model's name there (a number, a flag: a hand-edited file's) names none."""
        return models_of(self.meta)

    def save(self, path: str | os.PathLike[str], format: str = "ctxlab") -> Path:
        """Write this transcript as ``ctxlab`` JSONL, an ``anthropic`` request or ``openai``
        messages; `ctxlab.load` reads each back."""
        return save_transcript(self, path, format)  # type: ignore[arg-type]


def models_of(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The models a recording's ``meta["models"]`` names, in order (`Transcript.models`)."""
    listed = meta.get("models")
    if not isinstance(listed, list | tuple):
        return ()
    return tuple(m for m in listed if isinstance(m, str) and m)


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

    Raises `MessageFormatError` naming the file and line for anything it cannot read. The
    default counter's vocabulary starts loading meanwhile (`ctxlab.tokens.preload`): a session
    is loaded to be counted. A path no file system takes (not text, a NUL) is a `UsageError`.
    """
    path = path_argument(path, "path", what="a transcript file")
    preload()
    return read_transcript(path)


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """`load_transcript` without starting the counter's vocabulary (`sessions` reads files that
    it does not count exactly)."""
    path = Path(path)
    lines = session_lines(path, read_text(path))
    decoded = lines.records
    if not decoded:
        msg = f"{path} is empty; expected a meta line and messages"
        raise MessageFormatError(msg)
    (meta_line, meta), raw = decoded[0], decoded[1:]
    if not isinstance(meta, dict) or meta.get("type") != "meta":
        msg = f"{path} line {meta_line}: the first line must be a meta object with type 'meta'"
        raise MessageFormatError(msg)
    messages = tuple(_messages(raw, path))
    recorded = _meta_usage(meta.get("usage"), path, meta_line)
    times = _meta_times(meta.get("times"), path, meta_line)
    usage = {index: u for index, u in recorded.items() if not u.empty}  # an empty one: no bill
    meta = dict(meta)
    if "census" in meta:
        # The census of the file this one was saved from; this load's own replaces it.
        meta["source_census"] = meta.pop("census")
    empty = len(recorded) - len(usage)
    meta["census"] = _own_census(messages, usage, len(raw), lines, empty).as_meta()
    lines.name_left_out(meta)
    return Transcript(
        name=path.stem,
        meta=meta,
        system=_system_text(meta.get("system"), path, meta_line),
        messages=messages,
        tools=_meta_tools(meta.get("tools"), path, meta_line),
        usage=usage,
        times=times,
    )


def _own_census(
    messages: Sequence[UserMessage | AssistantMessage],
    usage: dict[int, ProviderUsage],
    lines: int,
    read: SessionLines,
    empty: int,
) -> Census:
    # ctxlab's own file: the meta line and one message a line, all of it used, but for lines
    # that are not JSON (and a last line cut off), skipped; its usage is keyed by message
    # index, so each entry lands on its message or on none (an empty one on none).
    replies = {i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)}
    placed = sum(i in replies for i in usage)
    lost = {"keyed to no reply": len(usage) - placed, EMPTY_USAGE: empty}
    return Census(
        unit="line",
        read={"meta": 1, "message": lines, **read.left_out_read},
        used={"meta": 1, "message": lines},
        skipped=read.left_out,
        usage_read=len(usage) + empty,
        usage_placed=placed,
        usage_lost={reason: count for reason, count in lost.items() if count},
        **holdings(messages),
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
        return {int(k): ProviderUsage(*v) for k, v in value.items()}
    except (TypeError, ValueError) as exc:
        msg = (
            f"{path} line {line}: meta.usage must map message indexes to four counts (five: "
            f"the cache writes of 1-hour TTL last) ({exc})"
        )
        raise MessageFormatError(msg) from exc


def _meta_times(value: Any, path: Path, line: int) -> dict[int, float]:
    # ctxlab writes {message index: POSIX seconds}; none (an older file): no clock.
    if value is None:
        return {}
    if isinstance(value, dict):
        times: dict[int, float] = {}
        for key, seconds in value.items():
            index = int(key) if isinstance(key, str) and key.isdigit() else None
            if index is None or not _a_time(seconds):
                break
            times[index] = float(seconds)
        else:
            return times
    msg = (
        f"{path} line {line}: meta.times must map message indexes to POSIX seconds (finite "
        "numbers from 0); remove it to load the transcript without a clock"
    )
    raise MessageFormatError(msg)


def _a_time(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


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


def clock_summary(transcript: Transcript) -> str:
    """The recording's clock in a line: its earliest and latest reply time (UTC), the span
    between them and how many replies are dated — or that the file records no times."""
    if not transcript.times:
        return "no clock: the file records no times"
    replies = sum(isinstance(m, AssistantMessage) for m in transcript.messages)
    earliest, latest = min(transcript.times.values()), max(transcript.times.values())
    return (
        f"{_utc(earliest)} → {_utc(latest)} ({_duration(latest - earliest)}; "
        f"{len(transcript.times)} of {replies} replies dated)"
    )


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def transcript_html(transcript: Transcript) -> str:
    """A recorded session at a glance: where it came from, its size, its first words."""
    roles: dict[str, int] = {}
    calls = 0
    for message in transcript.messages:
        roles[message.role] = roles.get(message.role, 0) + 1
        calls += len(getattr(message, "tool_uses", ()))
    first = next(
        (b.text for m in transcript.messages for b in m.content if isinstance(b, TextBlock)), ""
    )
    facts = [
        ["source", transcript.meta.get("source", "ctxlab")],
        [
            "messages",
            f"{len(transcript.messages)} ({roles.get('user', 0)} user, {roles.get('assistant', 0)} assistant)",
        ],
        ["tool calls", calls],
        ["tool schemas", len(transcript.tools)],
        ["steps with provider usage", len(transcript.usage)],
        ["clock", clock_summary(transcript)],
        ["census", str(transcript.census or "none (built in code)")],
        ["first user words", first[:300] + ("…" if len(first) > 300 else "")],
    ]
    return f"<b>Transcript {escape(transcript.name)}</b>" + table_html(facts, ["", ""])
