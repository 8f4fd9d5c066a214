"""The prepared model request: one System text, messages, and tool schemas."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.messages._messages import AssistantMessage, UserMessage
from ctxlab.messages._text import clean_value

__all__ = ["WIRE_FORMATS", "ModelRequest", "ToolSchema"]

WIRE_FORMATS: dict[str, Callable[[Any], dict[str, Any]]] = {}
"""Converters to a provider's wire format, by name (``anthropic_request``, ``anthropic_tool``),
registered by the adapters in ``ctxlab.models`` when they load: the request type stays below the
adapters and imports none of them."""


def _wire(kind: str, value: Any) -> dict[str, Any]:
    convert = WIRE_FORMATS.get(kind)
    if convert is None:  # only if ctxlab.models was never imported (``import ctxlab`` does)
        msg = f"no {kind} converter registered: import ctxlab.models first"
        raise LookupError(msg)
    return convert(value)


@dataclass(frozen=True)
class ToolSchema:
    """A tool as the model sees it."""

    name: str
    """The tool's name."""
    description: str = ""
    """What it does, for the model."""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    """JSON Schema of its arguments."""

    def __post_init__(self) -> None:
        # A schema a file recorded may hold lone surrogates (JSON's "\ud800"): replaced here,
        # once, as every block's text is, or each later hash, count and request breaks on it.
        try:
            schema = clean_value(self.input_schema)
        except ValueError as exc:
            msg = f"tool {self.name!r}: its input schema is refused: {exc}"
            raise MessageFormatError(msg) from exc
        for name, value in (
            ("name", clean_value(self.name)),
            ("description", clean_value(self.description)),
            ("input_schema", schema),
        ):
            object.__setattr__(self, name, value)

    @cached_property
    def rendered(self) -> str:
        """The JSON counted against the budget."""
        return json.dumps(
            {"name": self.name, "description": self.description, "input_schema": self.input_schema},
            ensure_ascii=False,
            sort_keys=True,
        )

    def to_anthropic(self) -> dict[str, Any]:
        """The ``tools`` entry of an Anthropic request (`ctxlab.models.tool_to_anthropic`, the
        adapter's function; this is a convenience alias)."""
        return _wire("anthropic_tool", self)


@dataclass(frozen=True)
class ModelRequest:
    """What is sent to the model: System → conversation → transient → references, plus tools."""

    system: str
    """The one System message."""
    messages: Sequence[UserMessage | AssistantMessage]
    """Summary, conversation, transient material and references, in that order (a tuple, or
    a tuple-like view of one shared by several requests: a recording's)."""
    tools: tuple[ToolSchema, ...] = ()
    """Tool schemas (travel in their own request field, counted in the budget)."""
    material_messages: int = 0
    """How many messages at the end are per-request material (transient, references): a
    provider's prompt cache should end before them, where the next request still matches."""

    def to_anthropic(self) -> dict[str, Any]:
        """``system``, ``messages`` and ``tools`` of an Anthropic Messages request.

        A convenience alias of `ctxlab.models.request_to_anthropic`: the wire format lives with
        the adapter, which registers it (`WIRE_FORMATS`), so the request type depends on no
        provider's format.
        """
        return _wire("anthropic_request", self)
