"""Content blocks: the parts a message is made of.

Block and field names follow the Anthropic Messages format, so that conversion is a re-labelling,
and add two of ctxlab's own: `HintBlock`, a harness note to the model that is never mistaken for
the user's words, and `ProviderBlock`, any other provider block (server tools, search results, a
type ctxlab does not know yet) carried through unchanged.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, field_validator

from ctxlab.messages._frozen import Frozen, derived
from ctxlab.messages._text import clean_value

__all__ = [
    "ANTHROPIC_BLOCK_TYPES",
    "NOT_IN_ROLE",
    "RESULT_PART_TYPES",
    "AssistantBlock",
    "Base64ImageSource",
    "ContentBlock",
    "DocumentBlock",
    "HintBlock",
    "ImageBlock",
    "ImageSource",
    "ProviderBlock",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolResultContent",
    "ToolUseBlock",
    "UrlImageSource",
    "UserBlock",
]

ANTHROPIC_BLOCK_TYPES = frozenset(
    {"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
)
"""The Anthropic block types ctxlab has a model of (any other is carried as a `ProviderBlock`)."""
RESULT_PART_TYPES = frozenset({"text", "image", "document"})
"""The modelled types a tool result's content may hold (any other is a `ProviderBlock` there)."""
NOT_IN_ROLE: dict[str, frozenset[str]] = {
    "user": frozenset({"thinking", "redacted_thinking"}),
    "assistant": frozenset({"document"}),
}
"""Role → the modelled types a turn of that role cannot hold: a file may record one there (a
Claude Code user line with thinking), and it is carried as a `ProviderBlock`, kept as it came —
by every reader, so that what ctxlab writes back reads back the same."""

# A hint reaches a provider as text wrapped in this tag; reading it back restores the hint.
HINT_OPEN = "<system-reminder>"
HINT_CLOSE = "</system-reminder>"


def _valid_text(cls: type, value: Any) -> Any:
    # Undecodable bytes and lone surrogates would break every later serialization (the log, the
    # provider request): they are replaced here, once, whatever produced them.
    return clean_value(value)


# `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` builds this encoder at every
# call; one built once gives the same text (every call argument of a session's tool calls).
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class _Block(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def evolve(self, **changes: Any) -> Self:
        """A new block with ``changes`` applied and validated.

        Unlike ``model_copy``, the changes are validated (``model_copy`` drops the cached hash
        of the old content, `Frozen`, but checks nothing).
        """
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data.update(changes)
        return type(self).model_validate(data)

    @derived
    def content_hash(self) -> str:
        """A stable hash of the block's content (16 hex digits of SHA-256)."""
        # The serializer's bytes: what ``model_dump_json().encode()`` gives, without decoding
        # and encoding again (a what-if hashes every block of a session once).
        return hashlib.sha256(self.__pydantic_serializer__.to_json(self)).hexdigest()[:16]


class TextBlock(_Block):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str
    """The text."""

    _clean = field_validator("text", mode="before")(_valid_text)


class HintBlock(_Block):
    """A note from the harness to the model (an image-limit notice, a compaction hint, ...).

    Rendered to providers as text inside ``<system-reminder>`` tags.
    """

    type: Literal["hint"] = "hint"
    hint: str
    """What the harness tells the model."""

    _clean = field_validator("hint", mode="before")(_valid_text)

    @property
    def rendered(self) -> str:
        """The text a provider receives for this hint."""
        return f"{HINT_OPEN}{self.hint}{HINT_CLOSE}"


class Base64ImageSource(_Block):
    """Image bytes carried inline."""

    type: Literal["base64"] = "base64"
    media_type: str
    """MIME type, e.g. ``image/png``."""
    data: str
    """The image bytes, base64-encoded."""


class UrlImageSource(_Block):
    """An image the provider fetches from a URL."""

    type: Literal["url"] = "url"
    url: str
    """Where the image is."""


ImageSource = Annotated[Base64ImageSource | UrlImageSource, Field(discriminator="type")]


class ImageBlock(_Block):
    """An image."""

    type: Literal["image"] = "image"
    source: ImageSource
    """Where the image's bytes come from."""


class ToolUseBlock(_Block):
    """A tool call requested by the model."""

    type: Literal["tool_use"] = "tool_use"
    id: str = Field(min_length=1)
    """The call's id; its result names it in ``tool_use_id``."""
    name: str = Field(min_length=1)
    """The tool's name."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The arguments, as JSON."""

    _clean = field_validator("id", "name", "input", mode="before")(_valid_text)

    @derived
    def input_json(self) -> str:
        """The arguments rendered as compact JSON (what is counted and shown)."""
        return _COMPACT_JSON.encode(self.input)


class ThinkingBlock(_Block):
    """The model's visible reasoning (extended thinking), kept as the provider returned it:
    Anthropic requires the signed block back, unmodified, when a tool call follows it."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    """The reasoning text."""
    signature: str = ""
    """The provider's signature of the block (empty when the source did not record one)."""

    _clean = field_validator("thinking", mode="before")(_valid_text)


class RedactedThinkingBlock(_Block):
    """Reasoning the provider encrypted: opaque data, sent back as it came."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str
    """The encrypted reasoning."""


class DocumentBlock(_Block):
    """A document (a PDF, plain text, or text parts), with its title, context and citation
    settings, as in the Anthropic format."""

    type: Literal["document"] = "document"
    source: dict[str, Any]
    """``{"type": "base64", "media_type", "data"}``, ``{"type": "text", "media_type", "data"}``,
    ``{"type": "content", "content": [...]}`` or ``{"type": "url", "url"}``."""
    title: str | None = None
    context: str | None = None
    citations: dict[str, Any] | None = None

    @derived
    def text(self) -> str:
        """The document's text when it carries text (a text or content source), else ``""``."""
        kind = self.source.get("type")
        if kind == "text":
            return str(self.source.get("data", ""))
        if kind == "content":
            parts = self.source.get("content")
            if isinstance(parts, str):
                return parts
            # Parts are a list; anything else a file holds there carries no text to read.
            listed = parts if isinstance(parts, list | tuple) else ()
            return "\n".join(str(p.get("text", "")) for p in listed if isinstance(p, dict))
        return ""


class ProviderBlock(_Block):
    """A provider block ctxlab has no model of (server tool use and results, MCP blocks, search
    results, ...): ``data`` is the block exactly as the provider wrote it, sent back as it is."""

    type: Literal["provider"] = "provider"
    data: dict[str, Any]
    """The block as the provider wrote it (its own ``type`` included)."""

    @property
    def kind(self) -> str:
        """The provider's name for the block, e.g. ``server_tool_use``."""
        return str(self.data.get("type", "unknown"))

    @derived
    def data_json(self) -> str:
        """The block as compact JSON (what is counted and shown)."""
        return json.dumps(self.data, ensure_ascii=False, separators=(",", ":"), default=str)


ToolResultContent = Annotated[
    TextBlock | ImageBlock | DocumentBlock | ProviderBlock, Field(discriminator="type")
]


class ToolResultBlock(_Block):
    """The result of a tool call; tool output is text and is never rendered as markup."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str = Field(min_length=1)
    """The id of the `ToolUseBlock` this answers."""
    content: str | tuple[ToolResultContent, ...] = ""
    """The output: a string, or text and image parts."""
    is_error: bool | None = None
    """True when the tool failed; None when the producer did not say."""

    _clean = field_validator("tool_use_id", mode="before")(_valid_text)

    @field_validator("content", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: Any) -> Any:
        if isinstance(value, str | bytes | bytearray):
            return clean_value(value)
        return tuple(value) if isinstance(value, list) else value

    @derived
    def text(self) -> str:
        """The textual part of the output (image parts are left out)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content if isinstance(part, TextBlock))

    @property
    def images(self) -> tuple[ImageBlock, ...]:
        """The image parts of the output."""
        if isinstance(self.content, str):
            return ()
        return tuple(part for part in self.content if isinstance(part, ImageBlock))

    @property
    def other_parts(self) -> tuple[DocumentBlock | ProviderBlock, ...]:
        """The parts that are neither text nor images (documents, search results, ...)."""
        if isinstance(self.content, str):
            return ()
        return tuple(p for p in self.content if isinstance(p, DocumentBlock | ProviderBlock))


UserBlock = Annotated[
    TextBlock | ImageBlock | ToolResultBlock | HintBlock | DocumentBlock | ProviderBlock,
    Field(discriminator="type"),
]
AssistantBlock = Annotated[
    TextBlock | ToolUseBlock | HintBlock | ThinkingBlock | RedactedThinkingBlock | ProviderBlock,
    Field(discriminator="type"),
]
ContentBlock = (
    TextBlock
    | ImageBlock
    | ToolUseBlock
    | ToolResultBlock
    | HintBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | DocumentBlock
    | ProviderBlock
)
