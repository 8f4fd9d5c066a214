"""Text that can always be stored, sent and shown: invalid bytes and lone surrogates replaced.

Tool output is not always valid Unicode: ``os.listdir`` returns undecodable file names with
surrogate escapes (``"caf\\udce9.txt"``), a subprocess hands over raw bytes, and JSON may carry a
lone ``\\ud800``. Such text cannot be encoded as UTF-8, so it would break serialization (the
session log, the provider request) at some later step. Every block cleans its text on the way in.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DECODE_NOTE",
    "MAX_NESTING",
    "REPLACEMENT",
    "clean_text",
    "clean_value",
    "decoded_output",
]

REPLACEMENT = "\ufffd"
DECODE_NOTE = "[ctxlab: {count} undecodable bytes of this output were replaced by U+FFFD]\n"
"""Opens a tool output whose bytes were not all valid text (the head survives truncation)."""


def clean_text(value: str | bytes | bytearray) -> tuple[str, int]:
    """``value`` as valid Unicode text, and how many bytes or code points were replaced by
    U+FFFD. Surrogate-escaped bytes are recovered first, so valid UTF-8 hidden in them survives."""
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
        return text, text.count(REPLACEMENT) - bytes(value).decode("utf-8", "ignore").count(
            REPLACEMENT
        )
    if value.isascii():
        return value, 0
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return value, 0
    # Surrogate escapes (U+DC80–U+DCFF) stand for raw bytes: recovered, then decoded (valid
    # UTF-8 among them survives). Any other surrogate is lone and becomes U+FFFD itself.
    lone = "".join(
        REPLACEMENT if 0xD800 <= ord(c) < 0xDC80 or 0xDD00 <= ord(c) <= 0xDFFF else c for c in value
    )
    text = lone.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text, text.count(REPLACEMENT) - value.count(REPLACEMENT)


MAX_NESTING = 100
"""How deeply a block's JSON value (a tool call's input) may nest. Real inputs nest a few
levels; a deeper one is refused here, with its depth, rather than breaking with a
`RecursionError` in whichever later step walks it (serialization, counting, rendering)."""


def clean_value(value: Any, depth: int = 0) -> Any:
    """``value`` with every string in it (nested in dicts and lists too) made valid text.

    Raises `ValueError` for a value nested deeper than `MAX_NESTING`.
    """
    if isinstance(value, str):
        return clean_text(value)[0]
    if isinstance(value, bytes | bytearray):
        return clean_text(value)[0]
    if isinstance(value, dict | list | tuple) and depth >= MAX_NESTING:
        msg = (
            f"a value nested more than {MAX_NESTING} levels deep (a tool call's input?) is refused"
        )
        raise ValueError(msg)
    if isinstance(value, dict):
        return {clean_value(k, depth + 1): clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(clean_value(v, depth + 1) for v in value)
    return value


def decoded_output(value: str | bytes | bytearray) -> str:
    """Tool output as text; when bytes had to be replaced, it opens with `DECODE_NOTE` (the
    model learns the output was damaged, and the manifest records it)."""
    text, replaced = clean_text(value)
    return DECODE_NOTE.format(count=replaced) + text if replaced else text
