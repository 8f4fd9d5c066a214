"""The prepared model request: one System text, messages, and tool schemas."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ctxlab.messages import AssistantMessage, UserMessage

__all__ = ["ModelRequest", "ToolSchema"]


@dataclass(frozen=True)
class ToolSchema:
    """A tool as the model sees it."""

    name: str
    """The tool's name."""
    description: str = ""
    """What it does, for the model."""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    """JSON Schema of its arguments."""

    @cached_property
    def rendered(self) -> str:
        """The JSON counted against the budget."""
        return json.dumps(
            {"name": self.name, "description": self.description, "input_schema": self.input_schema},
            ensure_ascii=False,
            sort_keys=True,
        )

    def to_anthropic(self) -> dict[str, Any]:
        """The ``tools`` entry of an Anthropic request (see `ctxlab.models.tool_to_anthropic`)."""
        from ctxlab.models._anthropic_format import tool_to_anthropic

        return tool_to_anthropic(self)


@dataclass(frozen=True)
class ModelRequest:
    """What is sent to the model: System → conversation → transient → references, plus tools."""

    system: str
    """The one System message."""
    messages: tuple[UserMessage | AssistantMessage, ...]
    """Summary, conversation, transient material and references, in that order."""
    tools: tuple[ToolSchema, ...] = ()
    """Tool schemas (travel in their own request field, counted in the budget)."""
    material_messages: int = 0
    """How many messages at the end are per-request material (transient, references): a
    provider's prompt cache should end before them, where the next request still matches."""

    def to_anthropic(self) -> dict[str, Any]:
        """``system``, ``messages`` and ``tools`` of an Anthropic Messages request.

        A convenience: the wire format lives with the adapter (`ctxlab.models`), imported here
        only when asked for, so the engine does not depend on any provider's format.
        """
        from ctxlab.models._anthropic_format import request_to_anthropic

        return request_to_anthropic(self)
