"""Writing a `Transcript`: ctxlab's JSONL (what `load_transcript` reads), an Anthropic Messages
request, or OpenAI Chat Completions messages — each lossless for what its format can hold."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.exceptions import UsageError
from ctxlab.messages._request import ModelRequest
from ctxlab.models import messages_to_anthropic, request_to_openai, tool_to_anthropic
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript

__all__ = ["SaveFormat", "save_transcript", "to_openai"]

SaveFormat = Literal["ctxlab", "anthropic", "openai"]


def save_transcript(
    transcript: Transcript, path: str | os.PathLike[str], format: SaveFormat = "ctxlab"
) -> Path:
    """Write ``transcript`` to ``path`` in ``format``; returns the path. `ctxlab.load` reads
    every one of them back."""
    target = path_argument(path, "path", what="the transcript's file")
    if format == "ctxlab":
        meta = {
            **{k: v for k, v in transcript.meta.items() if _jsonable(v)},
            "type": "meta",
            "system": transcript.system,
            "tools": [tool_to_anthropic(t) for t in transcript.tools],
            "usage": {str(i): list(_usage(u)) for i, u in transcript.usage.items()},
            "times": {str(i): t for i, t in transcript.times.items()},
        }
        lines = [json.dumps(meta, ensure_ascii=False)]
        lines += [
            json.dumps(m, ensure_ascii=False) for m in messages_to_anthropic(transcript.messages)
        ]
        text = "\n".join(lines) + "\n"
    elif format == "anthropic":
        body: dict[str, Any] = {"messages": messages_to_anthropic(transcript.messages)}
        if transcript.system:
            body["system"] = transcript.system
        if transcript.tools:
            body["tools"] = [tool_to_anthropic(t) for t in transcript.tools]
        text = json.dumps(body, ensure_ascii=False, indent=1)
    elif format == "openai":
        text = json.dumps(to_openai(transcript), ensure_ascii=False, indent=1)
    else:
        msg = f"format must be 'ctxlab', 'anthropic' or 'openai', got {format!r}"
        raise UsageError(msg)
    return write_atomic(target, _escaped(text), what="transcript")


_ESCAPED = re.compile(r"[\ud800-\udfff\x85\u2028\u2029]")
"""What ``json.dumps(ensure_ascii=False)`` leaves raw that the file cannot hold as it is: lone
surrogates (no UTF-8 encodes one) and the line breaks of Unicode other than ``\\n`` (a reader
splitting lines by ``str.splitlines`` would cut a record at one)."""


def _escaped(text: str) -> str:
    """JSON ``text`` with each of `_ESCAPED` written as its JSON escape (``\\ud800``), so that the
    file is UTF-8, one record a line, and reads back the same strings. Only a string can hold
    one (``json.dumps`` writes the rest in ASCII)."""
    return _ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _usage(usage: Any) -> tuple[int, ...]:
    counts = (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    )
    # The 1-hour writes only when there are some: files without them read as before.
    hour = usage.cache_creation_1h_input_tokens
    return (*counts, hour) if hour else counts


def to_openai(transcript: Transcript) -> list[dict[str, Any]]:
    """The transcript as OpenAI Chat Completions messages: the adapter's own wire format
    (`request_to_openai`), so a saved session reads as a request `OpenAIModel` would send."""
    request = ModelRequest(system=transcript.system, messages=transcript.messages)
    messages: list[dict[str, Any]] = request_to_openai(request)["messages"]
    return messages
