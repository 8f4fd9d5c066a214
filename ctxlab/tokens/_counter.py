"""The token-counting protocol and the cheap approximate counter."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import finite as _finite
from ctxlab.util._checks import shown

__all__ = ["MIN_CHARS_PER_TOKEN", "ApproximateCounter", "TokenCount", "TokenCounter"]


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A token figure together with how it was obtained."""

    tokens: int
    """The number of tokens."""
    method: str
    """The counting method, e.g. ``tiktoken:cl100k_base`` or ``approximate:chars/4``."""
    exact: bool
    """True only when the count is the provider's own (its tokenizer or API)."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text. Implementations must be deterministic and thread-safe."""

    @property
    def method(self) -> str:
        """A short name of the counting method, shown in manifests."""
        ...

    @property
    def exact(self) -> bool:
        """Whether counts equal what the target provider will bill."""
        ...

    def count_text(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...


MIN_CHARS_PER_TOKEN = 0.25
"""The fewest characters a token `ApproximateCounter` takes: a character is at most 4 bytes of
UTF-8 and a byte-level tokenizer makes at most one token of a byte, so no tokenizer counts more
than 4 tokens a character. Below it a count would pass what any text can have (`1e-300` made
3e300 tokens of three characters, past `ctxlab.messages.MAX_TOKENS`)."""


def not_text(value: object) -> UsageError:
    """The error of a counter given something other than text to count."""
    return UsageError(f"a token counter counts text, got {shown(value)}")


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (which no UTF-8 holds) as U+FFFD: what tiktoken's own
    ``encode`` counts in its place."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class ApproximateCounter:
    """Estimates tokens as characters divided by ``chars_per_token`` (4 by default), rounded up.

    No tokenizer, no data: useful when speed matters more than accuracy. ``chars_per_token``
    is a finite number from `MIN_CHARS_PER_TOKEN` (0.25: 4 tokens a character, the most any
    tokenizer makes).
    """

    def __init__(self, chars_per_token: float = 4.0) -> None:
        number = not isinstance(chars_per_token, bool) and isinstance(chars_per_token, int | float)
        if not number or not _finite(chars_per_token) or chars_per_token <= 0:
            msg = (
                "chars_per_token must be a positive, finite number of characters a token "
                f"(4 by default), got {shown(chars_per_token)}"
            )
            raise UsageError(msg)
        if chars_per_token < MIN_CHARS_PER_TOKEN:
            msg = (
                f"chars_per_token must be at least {MIN_CHARS_PER_TOKEN} (4 tokens a character, "
                "the most any tokenizer makes: a character is at most 4 bytes, a token at least "
                f"one), got {chars_per_token!r}; 4 is typical of English text"
            )
            raise UsageError(msg)
        self.chars_per_token = float(chars_per_token)

    @property
    def method(self) -> str:
        """``approximate:chars/N``."""
        return f"approximate:chars/{self.chars_per_token:g}"

    @property
    def exact(self) -> bool:
        """Always False: this is an estimate."""
        return False

    def count_text(self, text: str) -> int:
        """``ceil(len(text) / chars_per_token)``."""
        if not isinstance(text, str):
            raise not_text(text)
        return math.ceil(len(text) / self.chars_per_token)

    def count(self, text: str) -> TokenCount:
        """The count with its method."""
        return TokenCount(self.count_text(text), self.method, self.exact)
