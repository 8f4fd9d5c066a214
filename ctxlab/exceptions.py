"""Every error ctxlab raises, in one place.

Messages say what happened and what to do about it. Run-time failures carry their data (the
manifest of a failed preparation, the token figures of a budget overrun) so that callers and the
notebook panels can show them without parsing text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxlab.manifest import ContextManifest

__all__ = [
    "CompressionError",
    "ContextBudgetExceeded",
    "CtxlabError",
    "InvalidToolPairs",
    "MessageFormatError",
    "OffloadError",
    "PreparationError",
    "TokenizerDataError",
    "UsageError",
]


class CtxlabError(Exception):
    """Base class of every error raised by ctxlab."""


class UsageError(CtxlabError, ValueError):
    """The API was called in a way it does not support; the message says how to call it."""


class MessageFormatError(CtxlabError, ValueError):
    """A message or content block is malformed (bad role, unknown block type, missing field)."""


class TokenizerDataError(CtxlabError):
    """The tokenizer data shipped with ctxlab is missing or fails its checksum."""


class OffloadError(CtxlabError):
    """Writing offloaded content to the workspace failed, or a path would leave the workspace."""


class PreparationError(CtxlabError):
    """Preparing a model request failed. ``manifest`` describes the failed preparation."""

    def __init__(self, message: str, *, manifest: ContextManifest | None = None) -> None:
        super().__init__(message)
        self.manifest = manifest


class InvalidToolPairs(PreparationError):
    """The conversation has a tool result without its call, or a call without its result."""


class ContextBudgetExceeded(PreparationError):
    """The request does not fit the input limit even after every allowed reduction.

    Reducing history cannot help when System, tool schemas or required material alone fill the
    budget: shorten them, raise the limit, or mark material optional.
    """

    def __init__(
        self,
        message: str,
        *,
        estimated_tokens: int,
        input_limit: int,
        manifest: ContextManifest | None = None,
    ) -> None:
        super().__init__(message, manifest=manifest)
        self.estimated_tokens = estimated_tokens
        self.input_limit = input_limit


class CompressionError(PreparationError):
    """Summarization failed on every attempt and fallback truncation is disabled.

    The working context was left untouched.
    """
