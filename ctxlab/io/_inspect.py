"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json``.

Read from Inspect's own types (UKGovernmentBEIS/inspect_ai, ``inspect_ai/log/_log.py``:
``EvalLog``, ``EvalSample``; ``inspect_ai/model/_chat_message.py``: ``ChatMessageSystem``,
``ChatMessageUser``, ``ChatMessageAssistant`` with ``tool_calls`` — ``id``, ``function``,
``arguments`` —, ``ChatMessageTool`` with ``tool_call_id`` and ``error``; ``inspect_ai/log/
_recorders/eval.py``: the zip holds ``header.json`` and ``samples/<id>_epoch_<n>.json``;
2025–2026). One log holds many samples: ``episode`` picks one, in the order the log lists them.
A sample's ``model`` events carry each call's usage (``input_tokens`` — cache reads and writes
apart in ``input_tokens_cache_read`` / ``_write`` —, ``output_tokens``).
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
from ctxlab.io._build import ConversationBuilder, image_block, text_parts
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
    """The conversation, System text and notes of one sample."""
    messages = sample.get("messages")
    if not isinstance(messages, list):
        msg = f"{where}: an Inspect sample needs a 'messages' list"
        raise MessageFormatError(msg)
    builder = ConversationBuilder(where)
    system: list[str] = []
    usages = _model_usages(sample.get("events"))
    models: list[str] = []
    replies = 0
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            msg = f"{where} message {index}: not an object"
            raise MessageFormatError(msg)
        role = message.get("role")
        if role == "system":
            system.append(_text(message.get("content")))
        elif role == "user":
            builder.add("user", _content(message.get("content"), builder))
        elif role == "assistant":
            blocks = _content(message.get("content"), builder)
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    arguments = call.get("arguments")
                    inputs = (
                        dict(arguments)
                        if isinstance(arguments, Mapping)
                        else {"arguments": arguments}
                    )
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": str(call.get("id") or f"inspect_{index}"),
                            "name": str(call.get("function") or "tool"),
                            "input": inputs,
                        }
                    )
            model = message.get("model")
            if isinstance(model, str) and model not in models:
                models.append(model)
            builder.add("assistant", blocks, usages[replies] if replies < len(usages) else None)
            replies += 1
        elif role == "tool":
            error = message.get("error")
            text = _text(message.get("content"))
            if isinstance(error, Mapping) and not text:
                text = str(error.get("message") or error.get("type") or "error")
            builder.add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": str(message.get("tool_call_id") or ""),
                        "content": text,
                        "is_error": isinstance(error, Mapping),
                    }
                ],
            )
        else:
            builder.skip(f"{role} message")
    notes: dict[str, Any] = {k: sample.get(k) for k in ("id", "epoch") if k in sample}
    if models:
        notes["models"] = models
    return builder, "\n\n".join(s for s in system if s), notes


def _model_usages(events: Any) -> list[ProviderUsage | None]:
    usages: list[ProviderUsage | None] = []
    for event in events if isinstance(events, list) else ():
        if not isinstance(event, Mapping) or event.get("event") != "model":
            continue
        output = event.get("output")
        usage = output.get("usage") if isinstance(output, Mapping) else None
        if not isinstance(usage, Mapping):
            usages.append(None)
            continue

        usages.append(
            ProviderUsage(
                token_count(usage.get("input_tokens"), "input_tokens"),
                token_count(usage.get("output_tokens"), "output_tokens"),
                token_count(usage.get("input_tokens_cache_read"), "input_tokens_cache_read"),
                token_count(usage.get("input_tokens_cache_write"), "input_tokens_cache_write"),
            )
        )
    return usages


def _text(content: Any) -> str:
    return text_parts(content) or ""


def _content(content: Any, builder: ConversationBuilder) -> list[dict[str, Any]]:
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
            builder.skip("reasoning")
        elif kind == "image" and isinstance(item.get("image"), str):
            blocks.append(image_block(item["image"]))
        else:
            blocks.append({"type": "provider", "data": dict(item)})
    return blocks
