"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json``.

Read from Inspect's own types (UKGovernmentBEIS/inspect_ai, ``inspect_ai/log/_log.py``:
``EvalLog``, ``EvalSample``; ``inspect_ai/model/_chat_message.py``: ``ChatMessageSystem``,
``ChatMessageUser``, ``ChatMessageAssistant`` with ``tool_calls`` — ``id``, ``function``,
``arguments`` —, ``ChatMessageTool`` with ``tool_call_id`` and ``error``; ``inspect_ai/log/
_recorders/eval.py``: the zip holds ``header.json`` and ``samples/<id>_epoch_<n>.json``;
2025–2026). One log holds many samples: ``episode`` picks one, in the order the log lists them.
A sample's ``model`` events carry each call's usage (``input_tokens`` — cache reads and writes
apart in ``input_tokens_cache_read`` / ``_write`` —, ``output_tokens``) and its reply (with the
reply's message id, which pairs the usage with the reply); newer logs keep a call's input once,
in ``events_data.messages``, referenced by ``input_refs``. A sample logged without ``messages``
is read from its last model call. Reasoning (``ContentReasoning``) is kept as thinking: a reply
may be reasoning alone, billed like any other.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, text_parts
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = ["from_inspect_sample", "inspect_samples", "is_inspect_log", "read_eval_zip"]


def is_inspect_log(value: Any) -> bool:
    """An Inspect log: its ``eval`` spec beside a ``status`` (and usually ``samples``)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("eval"), Mapping)
        and "status" in value
        and ("samples" in value or "version" in value)
    )


_ZSTD = 93
"""The zip compression method newer Inspect versions write (zstandard), which Python's zip
module reads only from 3.14."""


MAX_ENTRY_BYTES = 256 << 20
"""The largest entry of an ``.eval`` zip read (256 MiB uncompressed: a sample is megabytes); a
larger one — a zip bomb, or damage in its sizes — is refused before anything is decompressed."""


def read_eval_zip(path: Path, episode: int | None = None) -> dict[str, Any]:
    """An ``.eval`` zip as the JSON log it stands for: its header with the samples beside —
    with ``episode``, that sample only (the others are empty placeholders keeping their place
    and count: a log of a thousand samples is not decompressed to read one).

    Memory is bounded by what the zip declares: an entry over `MAX_ENTRY_BYTES` is refused
    before decompressing, and none decompresses to more than it declares; damaged data is a
    `MessageFormatError` naming the file."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            sample_names = sorted(
                (n for n in names if n.startswith("samples/") and n.endswith(".json")),
                key=_natural,
            )
            read = [n for k, n in enumerate(sample_names) if episode is None or k == episode]
            _check_sizes(archive, ["header.json", *read] if "header.json" in names else read, path)
            header = (
                json.loads(_read(archive, "header.json", path)) if "header.json" in names else {}
            )
            samples = [
                json.loads(_read(archive, n, path)) if n in read else {} for n in sample_names
            ]
    except MessageFormatError:
        raise
    except RecursionError as exc:
        msg = f"{path}: an entry of this Inspect log is nested too deeply to read"
        raise MessageFormatError(msg) from exc
    except _damage() as exc:
        msg = (
            f"{path}: not a readable Inspect .eval log ({type(exc).__name__}: {exc}); the file "
            "is damaged or truncated — copy it again, or read its .json form (inspect log "
            "convert --to json)"
        )
        raise MessageFormatError(msg) from exc
    return {**header, "samples": samples}


def _damage() -> tuple[type[BaseException], ...]:
    """What reading a damaged zip raises: the zip module's errors (a bad directory, an entry
    cut short, a method it cannot read, an encrypted entry), zlib's, zstandard's when
    installed, and the JSON decoder's."""
    kinds: list[type[BaseException]] = [
        zipfile.BadZipFile,
        KeyError,
        ValueError,
        OSError,
        EOFError,
        zlib.error,
        NotImplementedError,
        RuntimeError,
    ]
    try:
        import zstandard
    except ImportError:
        return tuple(kinds)
    return (*kinds, zstandard.ZstdError)


def _check_sizes(archive: zipfile.ZipFile, names: list[str], path: Path) -> None:
    for name in names:
        size = archive.getinfo(name).file_size
        if size > MAX_ENTRY_BYTES:
            msg = (
                f"{path}: the entry {name!r} declares {size:,} bytes uncompressed, over the "
                f"{MAX_ENTRY_BYTES:,} read: a damaged log or a zip bomb; nothing was "
                "decompressed. Convert a real log (inspect log convert --to json) and load that"
            )
            raise MessageFormatError(msg)


def _read(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    info = archive.getinfo(name)
    if info.compress_type != _ZSTD:
        # The zip module stops at the declared size and checks the CRC: never more than it.
        return archive.read(name)
    try:
        import zstandard  # (optional: the `inspect` extra; only zstd-compressed logs need it)
    except ImportError as exc:
        msg = (
            f"{path}: this Inspect log is compressed with zstandard; install it (pip install "
            "'ctxlab[inspect]' or zstandard), or convert the log: inspect log convert --to json"
        )
        raise MessageFormatError(msg) from exc
    # The entry's bytes follow its local header (30 bytes, then the name and extra field).
    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        handle.seek(info.header_offset + 30 + skip)
        compressed = handle.read(info.compress_size)
    data: bytes = zstandard.ZstdDecompressor().decompress(
        compressed, max_output_size=info.file_size
    )
    return data


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdecimal() else p for p in re.split(r"(\d+)", name)]


def inspect_samples(log: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    """The samples of a log (an error naming the log when it holds none)."""
    samples = [s for s in log.get("samples") or () if isinstance(s, Mapping)]
    if not samples:
        status = log.get("status")
        msg = f"{where}: the Inspect log holds no samples (status {status!r}); log with samples"
        raise MessageFormatError(msg)
    return samples


def from_inspect_sample(
    sample: Mapping[str, Any], where: str
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of one sample: its ``messages`` — or, for a
    sample logged with its events alone, the last model call's input and output — each reply
    with the usage of the model call that produced it (by message id, else in order)."""
    builder = ConversationBuilder(where, unit="record")
    logged = sample.get("events")
    events: list[Any] = logged if isinstance(logged, list) else []
    calls = _model_calls(events, sample)
    notes: dict[str, Any] = {k: sample.get(k) for k in ("id", "epoch") if k in sample}
    messages = sample.get("messages")
    if not isinstance(messages, list) or not messages:
        messages = _from_events(calls, where)
        notes["read_from"] = "events"
    system: list[str] = []
    models: list[str] = []
    placed = _UsageByCall(calls)
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            msg = f"{where} message {index}: not an object"
            raise MessageFormatError(msg)
        role = message.get("role")
        builder.record(f"{role} message")
        if role == "system":
            system.append(_text(message.get("content")))
            builder.use()
        elif role == "user":
            if not builder.add("user", _content(message.get("content"))):
                builder.skip("message with nothing kept")
        elif role == "assistant":
            model = message.get("model")
            if isinstance(model, str) and model not in models:
                models.append(model)
            usage = placed.usage_of(message)
            if not builder.add("assistant", _reply(message, index), usage):
                builder.skip("empty reply")
            elif placed.call is not None:
                # The model event's ``timestamp`` (ISO 8601 with its offset): when the call
                # that produced the reply began.
                builder.reply_time(placed.call.stamp, replace=usage is not None)
        elif role == "tool":
            if not builder.add("user", [_result(message)]):
                # (a result naming no call is left out; its record must still be counted)
                builder.skip("message with nothing kept")
        else:
            builder.skip(f"{role} message")
    for reason in placed.unplaced():
        builder.lose_usage(reason)
    # The sample's final output is its last reply, said again (with that call's usage).
    builder.set_aside(sample.get("output"), "the sample's output (its last reply, again)")
    builder.set_aside(sample.get("model_usage"), "the sample's totals by model")
    # An older log's events, under "transcript": the messages are read, not these.
    builder.set_aside(sample.get("transcript"), "the sample's event transcript (an older log)")
    _count_events(builder, events)
    if models:
        notes["models"] = models
    return builder, "\n\n".join(s for s in system if s), notes


def _count_events(builder: ConversationBuilder, events: list[Any]) -> None:
    """Each event a record: a model call used (its usage is on the reply it produced, or counted
    lost), the others skipped by kind."""
    for event in events:
        kind = event.get("event") if isinstance(event, Mapping) else None
        builder.record(f"event {kind}", raw=event)
        if kind == "model":
            builder.use()
            # The call's input is the request as sent: the replies before it, said again; its
            # raw provider call repeats the input and the output.
            builder.set_aside(event.get("input"), "a model call's input messages")
            builder.set_aside(event.get("call"), "a model call's raw request and response")
        else:
            builder.skip(f"event {kind}")


def _reply(message: Mapping[str, Any], index: int) -> list[Any]:
    blocks = _content(message.get("content"))
    for call in message.get("tool_calls") or ():
        if isinstance(call, Mapping):
            arguments = call.get("arguments")
            inputs = dict(arguments) if isinstance(arguments, Mapping) else {"arguments": arguments}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("id") or f"inspect_{index}"),
                    "name": str(call.get("function") or "tool"),
                    "input": inputs,
                }
            )
    return blocks


def _result(message: Mapping[str, Any]) -> dict[str, Any]:
    error = message.get("error")
    text = _text(message.get("content"))
    if isinstance(error, Mapping) and not text:
        text = str(error.get("message") or error.get("type") or "error")
    return {
        "type": "tool_result",
        "tool_use_id": str(message.get("tool_call_id") or ""),
        "content": text,
        "is_error": isinstance(error, Mapping),
    }


class _ModelCall:
    """One ``model`` event: the messages it was sent, its reply, and what it was billed."""

    def __init__(self, event: Mapping[str, Any], sample: Mapping[str, Any]) -> None:
        output = as_mapping(event.get("output"))
        choices = output.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        self.reply = as_mapping(as_mapping(first).get("message"))
        self.id = self.reply.get("id") if isinstance(self.reply.get("id"), str) else None
        self.usage = _usage(output.get("usage"))
        self.input = _input(event, sample)
        self.stamp = event.get("timestamp")


def _model_calls(events: list[Any], sample: Mapping[str, Any]) -> list[_ModelCall]:
    return [
        _ModelCall(e, sample)
        for e in events
        if isinstance(e, Mapping) and e.get("event") == "model"
    ]


def _input(event: Mapping[str, Any], sample: Mapping[str, Any]) -> list[Any]:
    # Newer logs keep each call's input once, in the sample's ``events_data.messages``, and
    # give a call ranges of it (``input_refs``: [start, end) pairs).
    if isinstance(event.get("input"), list) and event["input"]:
        return list(event["input"])
    pool = as_mapping(sample.get("events_data")).get("messages")
    refs = event.get("input_refs")
    if not isinstance(pool, list) or not isinstance(refs, list):
        return []
    out: list[Any] = []
    for ref in refs:
        if isinstance(ref, list) and len(ref) == 2 and all(type(i) is int for i in ref):
            out.extend(pool[max(ref[0], 0) : max(ref[1], 0)])
    return out


def _from_events(calls: list[_ModelCall], where: str) -> list[Any]:
    """A sample's conversation from its events: the last model call's input and its reply."""
    last = next((c for c in reversed(calls) if c.input or c.reply), None)
    if last is None:
        msg = (
            f"{where}: an Inspect sample needs its 'messages', or 'model' events that hold them; "
            "this one has neither — log the eval with its samples' messages"
        )
        raise MessageFormatError(msg)
    return [*last.input, *([last.reply] if last.reply else [])]


class _UsageByCall:
    """Each reply's usage: the model call whose reply has the reply's id, else the call of its
    rank (a log without message ids); the calls no reply claimed are counted lost."""

    def __init__(self, calls: list[_ModelCall]) -> None:
        self.calls = calls
        self.by_id = {c.id: n for n, c in enumerate(calls) if c.id is not None}
        self.taken: set[int] = set()
        self.rank = 0
        self.call: _ModelCall | None = None
        """The call `usage_of` found for the last reply (None: none)."""

    def usage_of(self, message: Mapping[str, Any]) -> ProviderUsage | None:
        key = message.get("id")
        number = self.by_id.get(key) if isinstance(key, str) else None
        if number is None and not self.by_id and self.rank < len(self.calls):
            number = self.rank
        self.rank += 1
        self.call = None
        if number is None or number in self.taken:
            return None
        self.taken.add(number)
        self.call = self.calls[number]
        return self.call.usage

    def unplaced(self) -> list[str]:
        return [
            "a model call whose reply is not in the sample's messages"
            for n, c in enumerate(self.calls)
            if n not in self.taken and c.usage is not None
        ]


def _usage(usage: Any) -> ProviderUsage | None:
    if not isinstance(usage, Mapping):
        return None
    return ProviderUsage(
        token_count(usage.get("input_tokens"), "input_tokens"),
        token_count(usage.get("output_tokens"), "output_tokens"),
        token_count(usage.get("input_tokens_cache_read"), "input_tokens_cache_read"),
        token_count(usage.get("input_tokens_cache_write"), "input_tokens_cache_write"),
    )


def _text(content: Any) -> str:
    return text_parts(content) or ""


def _content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for item in content if isinstance(content, Sequence) else ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            if item["text"].strip():
                blocks.append({"type": "text", "text": item["text"]})
        elif kind == "reasoning":
            # Kept: a reply may be reasoning alone, and it was billed like any other.
            text = str(item.get("reasoning") or "")
            if item.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": text})
            else:
                signature = item.get("signature")
                blocks.append(
                    {"type": "thinking", "thinking": text, "signature": str(signature or "")}
                )
        elif kind == "image" and isinstance(item.get("image"), str):
            blocks.append(image_block(item["image"]))
        else:
            blocks.append({"type": "provider", "data": dict(item)})
    return blocks
