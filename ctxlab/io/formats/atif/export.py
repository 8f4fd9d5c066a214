"""Writing a `Transcript` as an ATIF v1.7 trajectory (Harbor's Agent Trajectory Interchange
Format: harbor-framework/harbor ``rfcs/0001-trajectory-format.md`` and the pydantic models of
``src/harbor/models/trajectories/``, read at v1.7).

The System text is a ``system`` step; each user turn a ``user`` step, except its tool results,
which are the ``observation`` of the agent step whose calls they answer; each reply an ``agent``
step (its text the ``message``, its thinking the ``reasoning_content``, its calls the
``tool_calls``, its usage the ``metrics``: ATIF's ``prompt_tokens`` counts all input, cache reads
(``cached_tokens``) and writes included, and the writes go in ``metrics.extra`` as the RFC asks).
What ATIF has no field for goes under an ``extra["ctxlab"]`` object (the format's extension
fields): the recording's compactions (``meta["compactions"]``) on the trajectory, each marked on
the step that carries its summary; the compactions and trigger evaluations of a replay
(`ctxlab.io.compaction_events`) when its steps are given; and the parts of a turn ATIF cannot
hold (images are files beside a trajectory; a hint, a document), counted on their step.
`ctxlab.load` reads the result back (the ``atif`` format), compactions included.
"""

from __future__ import annotations

import json
import mimetypes
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab._version import __version__
from ctxlab.exceptions import UsageError
from ctxlab.io._compaction_events import PreparedStep, compaction_events
from ctxlab.io.formats.atif.parse import EXTENSION
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    ImageBlock,
    ProviderUsage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.models import tool_to_openai
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript

__all__ = ["ATIF_VERSION", "to_atif", "write_atif"]

ATIF_VERSION = "ATIF-v1.7"
"""The version written (Harbor's ``Trajectory.schema_version`` default at v1.7)."""

_PLACED = ("summary_index", "summary_block")

_MEDIA = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image media types ATIF's ``ImageSource`` takes."""
"""Where a compaction's summary fell in the messages: recomputed when the file is read."""


def to_atif(
    transcript: Transcript,
    *,
    steps: Sequence[PreparedStep] = (),
    agent: str = "ctxlab",
    agent_version: str = __version__,
) -> dict[str, Any]:
    """``transcript`` as an ATIF v1.7 trajectory (a JSON-ready dict; `write_atif` writes it).

    ``steps``: a replay of it (`ctxlab.replay`'s steps, or any objects with a ``manifest`` and
    a ``compaction``): each evaluation of its compaction trigger, fired or not, is written in
    the trajectory's ``extra["ctxlab"]["compaction_events"]``."""
    if not hasattr(transcript, "messages") or not hasattr(transcript, "meta"):
        msg = f"to_atif takes a Transcript (ctxlab.load's result), got {type(transcript).__name__}"
        raise UsageError(msg)
    out: list[dict[str, Any]] = []
    if transcript.system.strip():
        out.append({"source": "system", "message": transcript.system})
    open_calls: dict[str, dict[str, Any]] = {}
    summaries = _summary_messages(transcript.meta.get("compactions"))
    for index, message in enumerate(transcript.messages):
        if isinstance(message, AssistantMessage):
            step = _agent_step(message, transcript.usage.get(index), transcript.times.get(index))
            open_calls = {c["tool_call_id"]: step for c in step.get("tool_calls", ())}
            out.append(step)
        else:
            out.extend(_user_steps(message, open_calls))
        if index in summaries and out:
            _own(out[-1])["compaction"] = summaries[index]
    for number, step in enumerate(out, 1):
        step["step_id"] = number
    return _trajectory(transcript, out, agent, agent_version, steps)


def write_atif(
    transcript: Transcript,
    path: str | os.PathLike[str],
    *,
    steps: Sequence[PreparedStep] = (),
) -> Path:
    """Write `to_atif`'s trajectory of ``transcript`` to ``path`` (JSON); returns the path."""
    target = path_argument(path, "path", what="the trajectory's file")
    text = json.dumps(to_atif(transcript, steps=steps), ensure_ascii=False, indent=1)
    return write_atomic(target, text, what="trajectory")


def _trajectory(
    transcript: Transcript,
    out: list[dict[str, Any]],
    agent: str,
    agent_version: str,
    steps: Sequence[PreparedStep],
) -> dict[str, Any]:
    if not out:
        msg = f"{transcript.name}: no messages and no System text: ATIF needs at least one step"
        raise UsageError(msg)
    described: dict[str, Any] = {"name": agent, "version": agent_version}
    models = transcript.models
    if models:
        described["model_name"] = models[0]
    if transcript.tools:
        described["tool_definitions"] = [tool_to_openai(t) for t in transcript.tools]
    document: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": transcript.name,
        "agent": described,
        "steps": out,
        "final_metrics": _totals(out),
    }
    own: dict[str, Any] = {"source": transcript.meta.get("source")}
    compactions = transcript.meta.get("compactions")
    if isinstance(compactions, list) and compactions:
        own["compactions"] = [
            {k: v for k, v in c.items() if k not in _PLACED}
            for c in compactions
            if isinstance(c, Mapping)
        ]
    events = transcript.meta.get("compaction_events")
    if steps:
        own["compaction_events"] = compaction_events(steps)
    elif isinstance(events, list) and events:
        own["compaction_events"] = events  # as the transcript was loaded with them
    document["extra"] = {EXTENSION: own}
    return document


def _summary_messages(compactions: Any) -> dict[int, int]:
    # Which message carries each compaction's summary (by the compaction's rank).
    placed: dict[int, int] = {}
    for rank, record in enumerate(compactions if isinstance(compactions, list) else ()):
        where = record.get("summary_index") if isinstance(record, Mapping) else None
        if isinstance(where, int) and not isinstance(where, bool):
            placed.setdefault(where, rank)
    return placed


def _agent_step(
    message: AssistantMessage, usage: ProviderUsage | None, time: float | None
) -> dict[str, Any]:
    texts: list[str] = []
    reasoning: list[ThinkingBlock] = []
    calls: list[dict[str, Any]] = []
    redacted: list[str] = []
    left: dict[str, int] = {}
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            reasoning.append(block)
        elif isinstance(block, ToolUseBlock):
            calls.append(
                {"tool_call_id": block.id, "function_name": block.name, "arguments": block.input}
            )
        elif isinstance(block, RedactedThinkingBlock):
            redacted.append(block.data)  # the provider's opaque thinking: ATIF has no field
        else:
            left[block.type] = left.get(block.type, 0) + 1
    step: dict[str, Any] = {"source": "agent", "message": _message(texts)}
    if redacted:
        _own(step)["redacted_thinking"] = redacted
    if reasoning:
        step["reasoning_content"] = "\n\n".join(b.thinking for b in reasoning)
        if any(b.signature for b in reasoning):
            _own(step)["signatures"] = [b.signature for b in reasoning]
    if calls:
        step["tool_calls"] = calls
    if usage is not None:
        step["metrics"] = _metrics(usage)
    if time is not None:
        step["timestamp"] = datetime.fromtimestamp(time, UTC).isoformat()
    if left:
        _own(step)["parts_left_out"] = left
    return step


def _message(parts: Sequence[str | dict[str, Any]]) -> str | list[dict[str, Any]]:
    # One text is ATIF's string message; several parts, or an image, are ContentParts (v1.6+).
    if len(parts) == 1 and isinstance(parts[0], str):
        return parts[0]
    if not parts:
        return ""
    return [{"type": "text", "text": p} if isinstance(p, str) else p for p in parts]


def _image(block: ImageBlock) -> dict[str, Any] | None:
    """An image as an ATIF ContentPart: its bytes as a ``data:`` URL, or its link (ATIF's
    ``path`` is a file path or URL, of the four media types ATIF names); None for another."""
    source = block.source
    if isinstance(source, Base64ImageSource):
        media, path = source.media_type, f"data:{source.media_type};base64,{source.data}"
    else:
        path = source.url
        media = mimetypes.guess_type(path.split("?", 1)[0])[0] or ""
    if media not in _MEDIA:
        return None
    return {"type": "image", "source": {"media_type": media, "path": path}}


def _metrics(usage: ProviderUsage) -> dict[str, Any]:
    # ATIF's prompt_tokens is all input; cached_tokens the cache reads within it; the cache
    # writes go in metrics.extra, as the RFC asks.
    metrics: dict[str, Any] = {
        "prompt_tokens": usage.total_input_tokens,
        "completion_tokens": usage.output_tokens,
        "cached_tokens": usage.cache_read_input_tokens,
    }
    extra: dict[str, Any] = {}
    if usage.cache_creation_input_tokens:
        extra["cache_creation_input_tokens"] = usage.cache_creation_input_tokens
    if usage.cache_creation_1h_input_tokens:
        hour = usage.cache_creation_1h_input_tokens
        extra[EXTENSION] = {"cache_creation_1h_input_tokens": hour}
    if extra:
        metrics["extra"] = extra
    return metrics


def _user_steps(
    message: UserMessage, open_calls: Mapping[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    texts: list[str | dict[str, Any]] = []
    left: dict[str, int] = {}
    for block in message.content:
        image = _image(block) if isinstance(block, ImageBlock) else None
        if image is not None:
            texts.append(image)
        elif isinstance(block, ToolResultBlock) and block.tool_use_id in open_calls:
            answered = open_calls[block.tool_use_id]
            results = answered.setdefault("observation", {"results": []})["results"]
            content = _result_content(block)
            results.append({"source_call_id": block.tool_use_id, "content": content})
            if not isinstance(block.content, str) and len(content) < len(block.content):
                lost = len(block.content) - len(content)
                counted = _own(answered).setdefault("parts_left_out", {})
                counted["result part"] = counted.get("result part", 0) + lost
            if block.is_error:
                _own(answered).setdefault("errors", []).append(block.tool_use_id)
        elif isinstance(block, ToolResultBlock):
            texts.append(block.text)  # a result of no call of the step before
        elif isinstance(block, TextBlock):
            texts.append(block.text)
        else:
            left[block.type] = left.get(block.type, 0) + 1
    if not texts and not left:
        return []
    step: dict[str, Any] = {"source": "user", "message": _message(texts)}
    if left:
        _own(step)["parts_left_out"] = left
    return [step]


def _result_content(block: ToolResultBlock) -> str | list[dict[str, Any]]:
    """A result's text, or its parts as ContentParts (ATIF v1.6+): text and images."""
    if isinstance(block.content, str):
        return block.content
    parts: list[dict[str, Any]] = []
    for part in block.content:
        image = _image(part) if isinstance(part, ImageBlock) else None
        if image is not None:
            parts.append(image)
        elif isinstance(part, TextBlock):
            parts.append({"type": "text", "text": part.text})
    return parts


def _own(step: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = step.setdefault("extra", {})
    own: dict[str, Any] = extra.setdefault(EXTENSION, {})
    return own


def _totals(out: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    metrics = [s["metrics"] for s in out if "metrics" in s]
    return {
        "total_prompt_tokens": sum(m["prompt_tokens"] for m in metrics),
        "total_completion_tokens": sum(m["completion_tokens"] for m in metrics),
        "total_cached_tokens": sum(m["cached_tokens"] for m in metrics),
        "total_steps": len(out),
    }
