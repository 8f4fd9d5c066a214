"""Reading a Messages API reply through the `anthropic` SDK: its stream step by step, its
message as ctxlab's `ModelResponse`, its usage whole — every count checked, the 1-hour share
of the cache writes, the calls of its ``iterations`` — and what is unreadable said as a
`MalformedReply`."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Mapping
from typing import Any

from ctxlab.exceptions import MalformedReply
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count
from ctxlab.models._anthropic_edits import applied_edits, reported_edits
from ctxlab.models._anthropic_format import messages_from_anthropic
from ctxlab.models._base import ModelResponse

__all__ = ["next_text", "reply_response", "sdk_read"]


async def next_text(texts: Any) -> str | None:
    try:
        text: str = await sdk_read(texts.__anext__())
    except StopAsyncIteration:
        return None
    return text


async def sdk_read(step: Awaitable[Any]) -> Any:
    """What the SDK's stream reads next: an event it cannot accumulate — a tool input too
    deep to parse, a block of a shape it does not know, an event out of order — fails it with
    an error of Python's own (ValueError, AttributeError, ...), said here as a MalformedReply."""
    try:
        return await step
    except StopAsyncIteration:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RuntimeError) as exc:
        raise _malformed(exc) from exc
    except AssertionError as exc:  # the SDK's own check: a stream that carried no message
        raise _malformed(exc, "the stream carried no message") from exc


def reply_response(message: Any) -> ModelResponse:
    try:
        # A block type this SDK does not model (a server compaction block, say) is built as
        # the union's first member with the block's own fields: the dump writes the fields as
        # they came, and pydantic's warning about the mismatch is no news.
        if not hasattr(message, "model_dump"):  # a body that is no message (text, a list)
            msg = f"the body is {type(message).__name__}, not a message"
            raise ValueError(msg)
        data = message.model_dump(mode="json", exclude_none=True, warnings=False)
        # Every block is kept: thinking must go back signed and unmodified with the tool
        # results that follow it, and server tool blocks are part of what the model said.
        content = data.get("content") or ""
        parsed = messages_from_anthropic([{"role": "assistant", "content": content}])[0]
    except (ValueError, RecursionError) as exc:  # pydantic's errors are ValueErrors
        raise _malformed(exc) from exc
    # The usage as the SDK holds it: dumped as JSON, a NaN count would read as a missing one.
    sdk_usage: Any = getattr(message, "usage", None)
    usage = (
        sdk_usage.model_dump(warnings=False)
        if hasattr(sdk_usage, "model_dump")
        else data.get("usage")
    )
    usage = usage if isinstance(usage, Mapping) else {}
    try:
        # Each count checked (`ProviderUsage`): a negative, NaN or textual one is no bill.
        billed = _billed(usage)
        _check_iterations(usage.get("iterations"))
    except ValueError as exc:
        raise _malformed(exc, "its usage is no token count") from exc
    return ModelResponse(
        message=parsed,  # type: ignore[arg-type]
        stop_reason=data.get("stop_reason") or "end_turn",
        usage=billed,
        model=data.get("model", ""),
        provider_transforms=applied_edits(data),
        applied_edits=reported_edits(data),
    )


_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""The counts of a usage, and of each of its ``iterations``."""


def _billed(usage: Mapping[str, Any]) -> ProviderUsage:
    """The four counts of ``usage`` and, of the cache writes, those made with the 1-hour time
    to live: ``cache_creation.ephemeral_1h_input_tokens`` (anthropic 2.17 ``types/usage.py``,
    ``CacheCreation``), priced twice the base input where the 5-minute writes are 1.25 times.
    `ValueError` for a count that is none, or 1-hour writes above all the writes."""
    counts = [token_count(usage.get(name), name) for name in _COUNTS]
    billed = ProviderUsage(*counts)
    split = usage.get("cache_creation")
    if split is None:
        return billed
    if not isinstance(split, Mapping):
        msg = f"usage field 'cache_creation' is {type(split).__name__}, not the TTL split"
        raise ValueError(msg)
    # Both checked; the 5-minute writes are the rest of the writes.
    checked = {
        name: token_count(0 if split.get(name) is None else split[name], f"cache_creation.{name}")
        for name in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
    }
    hour = checked["ephemeral_1h_input_tokens"]
    if hour > billed.cache_creation_input_tokens:
        msg = (
            f"1-hour cache writes {hour:,} exceed the cache writes "
            f"{billed.cache_creation_input_tokens:,}"
        )
        raise ValueError(msg)
    return dataclasses.replace(billed, cache_creation_1h_input_tokens=hour)


def _check_iterations(iterations: Any) -> None:
    """`ValueError` for ``usage.iterations`` (a list of sampling and compaction calls, each with
    the four counts: anthropic 2.14.0, ``beta_iterations_usage.py``) that is no such list: a
    compaction call is billed from it, beside the request."""
    if iterations is None:
        return
    if not isinstance(iterations, list):
        msg = f"usage field 'iterations' is {type(iterations).__name__}, not a list of calls"
        raise ValueError(msg)
    for number, step in enumerate(iterations):
        if not isinstance(step, Mapping):
            msg = f"usage field 'iterations[{number}]' is {type(step).__name__}, not a call"
            raise ValueError(msg)
        for name in _COUNTS:
            token_count(step.get(name), f"iterations[{number}].{name}")


def _malformed(exc: Exception, what: str = "") -> MalformedReply:
    reason = str(exc)
    # The SDK quotes the whole unreadable JSON: the start says enough.
    reason = reason if len(reason) <= 300 else reason[:300] + "…"
    said = f" ({what})" if what else ""
    return MalformedReply(f"the model's reply could not be read as a message{said}: {reason}")
