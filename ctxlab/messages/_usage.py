"""`ProviderUsage`: what a provider billed for one model request — beside the messages it
describes (as pydantic-ai's ``usage.py``), so importers, models and the session log read it
without the manifest."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.util._checks import shown

__all__ = ["MAX_TOKENS", "ProviderUsage", "count_or_none", "token_count"]

_DIGITS = re.compile(r"[0-9]{1,20}")

MAX_TOKENS = 2**40
"""The largest token count ctxlab takes from a file, a provider or a store (about 1.1 × 10¹²):
no text a process can hold has more tokens than bytes, and a terabyte of text is beyond any
request. A larger count is damage, and summed over a session it would overflow the 64-bit
integers of a table."""


def token_count(value: Any, field: str) -> int:
    """A token count as recorded by a provider or an exporter, as an ``int``.

    Missing (None) is 0; a whole float (``12.0``) or a string of digits is read as the number.
    Raises `MessageFormatError` (a `ValueError`) naming ``field`` for anything else — a
    negative count, infinity, NaN, a fraction, a bool, a count above `MAX_TOKENS` — because a
    bill computed from it would be wrong silently.
    """
    if value is None:
        return 0
    # ASCII digits only: "¹".isdigit() is true and int("¹") raises; at most 20 of them, so
    # that a line of 30,000 digits is refused without converting it.
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        value = int(value.strip())
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
        return value
    msg = (
        f"usage field {field!r} is {shown(value)}: a token count is a whole number from 0 to "
        f"{MAX_TOKENS:,}"
    )
    raise MessageFormatError(msg)


def count_or_none(value: Any) -> int | None:
    """A count a file records beside its messages (a compaction's ``preTokens``, an index),
    or None when it is missing or no count — NaN, infinity, negative, a fraction, text — so
    that one odd field costs that figure, not the file."""
    try:
        return None if value is None else token_count(value, "count")
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ProviderUsage:
    """What the provider billed for the request (known only after the response).

    Every count is a whole number from 0 to `MAX_TOKENS` (`ValueError` otherwise, naming the
    field)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    """Of the cache writes, those Anthropic wrote with the 1-hour time to live (the recording's
    ``cache_creation.ephemeral_1h_input_tokens``); the rest had the 5-minute one. Not more than
    ``cache_creation_input_tokens`` in usage that adds up (`ctxlab.analysis` flags one that does
    not, and does not trust its split)."""

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if type(value) is not int or not 0 <= value <= MAX_TOKENS:
                object.__setattr__(self, spec.name, token_count(value, spec.name))

    @classmethod
    def with_cache_inside(
        cls, input_tokens: Any, output_tokens: Any, cache_read: Any = 0, cache_write: Any = 0
    ) -> ProviderUsage:
        """Usage from a provider whose input count includes the cached tokens (OpenAI, Gemini,
        OpenTelemetry, LangChain): ctxlab keeps them apart, as Anthropic reports them. A cache
        larger than the input it is part of (inconsistent data) leaves an input of 0, never a
        negative one."""
        read = token_count(cache_read, "cache_read_input_tokens")
        write = token_count(cache_write, "cache_creation_input_tokens")
        total = token_count(input_tokens, "input_tokens")
        return cls(
            max(total - read - write, 0), token_count(output_tokens, "output_tokens"), read, write
        )

    @property
    def empty(self) -> bool:
        """Whether every count is zero: what a file records as ``usage: {}`` (or all zeros)
        for a reply no provider billed — a synthetic or failed reply — is no bill, and
        importers place no usage for it."""
        return not (
            self.input_tokens
            or self.output_tokens
            or self.cache_read_input_tokens
            or self.cache_creation_input_tokens
        )

    @property
    def total_input_tokens(self) -> int:
        """Input plus cache reads and writes: comparable to the manifest's estimate."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
