"""Material blocks: text the harness places in a request besides the conversation."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ctxlab.messages._text import clean_value

if TYPE_CHECKING:
    from ctxlab.manifest import Transform
    from ctxlab.materials._unrecorded import Unrecorded

__all__ = ["ContextBlock", "Material", "MaterialCategory", "Materials", "SystemPart"]

MaterialCategory = Literal["task", "notice", "memory", "knowledge", "source"]
"""Where material comes from; optional material is omitted memory → knowledge → source."""


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """A piece of material returned by a context source.

    Build with `ContextBlock.runtime` (current state, placed as transient user material) or
    `ContextBlock.reference` (supporting documents, placed after it). The fluent methods return
    new blocks.
    """

    id: str
    """Unique within its source; appears in the manifest as ``source/<name>/<id>``."""
    text: str
    """The material itself (Markdown)."""
    placement: Literal["transient", "references"] = "references"
    """``transient`` for runtime state, ``references`` for documents."""
    is_required: bool = False
    """Required material is never omitted for budget."""
    priority: int = 0
    """Within a category, lower priorities are omitted first."""
    revision: str | None = None
    """A business revision; the content hash is used when None."""

    @classmethod
    def runtime(cls, id: str, text: str) -> ContextBlock:
        """Current business state, shown as transient user material."""
        return cls(id=id, text=text, placement="transient")

    @classmethod
    def reference(cls, id: str, text: str) -> ContextBlock:
        """A supporting document, shown as reference user material."""
        return cls(id=id, text=text, placement="references")

    def required(self) -> ContextBlock:
        """This block, marked as never omitted for budget."""
        return dataclasses.replace(self, is_required=True)

    def with_priority(self, priority: int) -> ContextBlock:
        """This block with another omission priority (lower goes first)."""
        return dataclasses.replace(self, priority=priority)

    def with_revision(self, revision: str) -> ContextBlock:
        """This block with a business revision."""
        return dataclasses.replace(self, revision=revision)

    @property
    def content_hash(self) -> str:
        """16 hex digits of the SHA-256 of the text."""
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Material:
    """A loaded block with its origin, as the pipeline sees it."""

    item_id: str
    """Manifest id, e.g. ``source/change-record/status`` or ``workspace/MEMORY.md``."""
    source_id: str
    """The origin, e.g. ``source/change-record`` or ``workspace``."""
    category: MaterialCategory
    """What kind of material, which decides the omission order."""
    block: ContextBlock
    """The content."""
    tag: str = "HARNESS_CONTEXT"
    """The tag wrapping it in the request (``TASK_STATE``, ``RUNTIME_STATE``, ...)."""

    def render(self) -> str:
        """The text placed in the request."""
        return f'<{self.tag} id="{self.item_id}">\n{self.block.text}\n</{self.tag}>'


@dataclass(frozen=True, slots=True)
class SystemPart:
    """One named part of the System message (system prompt, an instruction, AGENTS.md)."""

    name: str
    """Manifest id suffix: ``system/<name>``."""
    text: str
    """The text (lone surrogates a file or a caller held replaced, as a block's are)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", clean_value(self.text))


@dataclass(frozen=True, slots=True)
class Materials:
    """Everything besides the conversation that a preparation places in the request."""

    system: tuple[SystemPart, ...] = ()
    """System parts, in order."""
    blocks: tuple[Material, ...] = ()
    """Transient and reference material, in order."""
    failures: tuple[tuple[str, str], ...] = ()
    """(source id, reason) of sources that failed with the omit policy."""
    notes: tuple[Transform, ...] = ()
    """What loading did to the material (workspace material cut to its limit), for the
    manifest."""
    unrecorded: Unrecorded | None = None
    """What the request carries that no recording holds (a recorded harness's own prompt and
    schemas), by its size alone: counted and laid first, never sent (`Unrecorded`)."""
