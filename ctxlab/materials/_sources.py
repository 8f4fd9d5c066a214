"""Context sources: business material read before every reasoning request.

A source is any async callable (or object with an async ``load``) that takes a `ContextRequest`
and returns a list of `ContextBlock`. The rules of the reference harness hold:

- a source is loaded once per preparation, sequentially, with a timeout (5 s by default), and
  never for summary preparations;
- a failure (exception, timeout, or no result at all) fails the preparation, unless the source's
  policy is ``omit``: then its material is left out and a ``source_unavailable`` transform says so;
- an empty list is no material, not a failure;
- structural errors — a block that is not a `ContextBlock`, an empty or duplicate id, a required
  block from an ``omit`` source — are errors that ``omit`` does not hide.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from ctxlab.exceptions import SourceError, SourceUnavailable, UsageError
from ctxlab.manifest import Purpose
from ctxlab.materials._block import ContextBlock, Material
from ctxlab.util._checks import seconds

__all__ = [
    "ContextRequest",
    "ContextSource",
    "FailurePolicy",
    "SourceRegistration",
    "TextSource",
    "load_sources",
    "validate_source_name",
]

FailurePolicy = Literal["fail", "omit"]
"""What a source's failure does: fail the preparation, or omit the source's material."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a source learns about the preparation it serves. Identities may be None."""

    agent_id: str | None
    user_id: str | None
    session_id: str | None
    request_id: str
    """The id of the request being prepared (the manifest's; the reference's ``callId``)."""
    purpose: Purpose
    """``reasoning``, ``recovery`` or ``compaction`` (sources are never loaded for summaries)."""

    @property
    def call_id(self) -> str:
        """Deprecated alias of `request_id` (kept for one release)."""
        return self.request_id


@runtime_checkable
class ContextSource(Protocol):
    """A reusable source: ``async load(request) -> list[ContextBlock]``. Keep it read-only."""

    async def load(self, request: ContextRequest) -> list[ContextBlock]: ...


SourceLike = ContextSource | Callable[[ContextRequest], Awaitable[Sequence[ContextBlock] | None]]


class TextSource:
    """A source holding one editable text, read at every preparation.

    Change ``source.text`` at any time — from a notebook cell or a widget while a call runs — and
    the next preparation sends the new text (with a new revision).

    Args:
        text: The text.
        id: The block id (manifest id ``source/<name>/<id>``).
        placement: ``references`` (a document) or ``transient`` (current state).
    """

    def __init__(self, text: str = "", *, id: str = "text", placement: str = "references") -> None:
        if placement not in ("references", "transient"):
            msg = f"placement must be 'references' or 'transient', got {placement!r}"
            raise UsageError(msg)
        self._lock = threading.Lock()
        self._text = text
        self.id = id
        self.placement = placement
        self.revision = 0
        """Bumped at every edit."""

    @property
    def text(self) -> str:
        """The current text."""
        with self._lock:
            return self._text

    @text.setter
    def text(self, value: str) -> None:
        if not isinstance(value, str):
            msg = f"a TextSource holds text, got {type(value).__name__}"
            raise UsageError(msg)
        with self._lock:
            self._text = value
            self.revision += 1

    async def load(self, request: ContextRequest) -> list[ContextBlock]:
        with self._lock:
            text, revision = self._text, self.revision
        if not text:
            return []
        factory = ContextBlock.runtime if self.placement == "transient" else ContextBlock.reference
        return [factory(self.id, text).with_revision(f"edit-{revision}")]


def validate_source_name(name: str, what: str = "source") -> str:
    """``name`` when it is a valid name of a ``what`` (a source, an instruction); `UsageError`
    saying the rule otherwise."""
    if not isinstance(name, str) or not _NAME.match(name):
        msg = (
            f"invalid {what} name {name!r}: start with a letter or digit and use only letters, "
            "digits, '_', '.' or '-'"
        )
        raise UsageError(msg)
    return name


@dataclass
class SourceRegistration:
    """A registered source and its options (editable between preparations)."""

    name: str
    source: SourceLike
    timeout: float = 5.0
    """Seconds a load may take."""
    on_failure: FailurePolicy = "fail"
    enabled: bool = True
    """Disabled sources are not loaded."""
    priority: int | None = None
    """Overrides the blocks' omission priority when set."""
    required: bool | None = None
    """Overrides the blocks' required flag when set (not with ``omit``)."""
    loads: int = field(default=0, init=False)
    """How many times the source was loaded."""

    def __post_init__(self) -> None:
        validate_source_name(self.name)
        if self.on_failure not in ("fail", "omit"):
            msg = f"on_failure must be 'fail' or 'omit', got {self.on_failure!r}"
            raise UsageError(msg)
        seconds(self.timeout, "timeout", "e.g. 5")
        if self.required and self.on_failure == "omit":
            msg = f"source {self.name!r}: required material cannot come from an 'omit' source"
            raise UsageError(msg)
        if not (isinstance(self.source, ContextSource) or callable(self.source)):
            msg = f"source {self.name!r} must be a ContextSource or an async callable"
            raise UsageError(msg)

    def update(
        self,
        *,
        enabled: bool | None = None,
        priority: int | None = None,
        required: bool | None = None,
    ) -> None:
        """Change the options read at the next preparation (None leaves one as it is;
        ``required=False`` clears the override). Required material cannot come from an
        ``omit`` source: that is a `UsageError` and nothing changes."""
        if required and self.on_failure == "omit":
            msg = f"source {self.name!r}: required material cannot come from an 'omit' source"
            raise UsageError(msg)
        if enabled is not None:
            self.enabled = enabled
        if priority is not None:
            self.priority = priority
        if required is not None:
            self.required = required or None

    async def _call(self, request: ContextRequest) -> Any:
        result: Any = (
            self.source.load(request)
            if isinstance(self.source, ContextSource)
            else self.source(request)
        )
        if inspect.isawaitable(result):
            result = await result
        return result


def _check_blocks(registration: SourceRegistration, result: Any) -> list[ContextBlock]:
    name = registration.name
    if not isinstance(result, (list, tuple)):
        msg = f"source {name!r} returned {type(result).__name__}; return a list of ContextBlock"
        raise SourceError(msg)
    seen: set[str] = set()
    blocks: list[ContextBlock] = []
    for block in result:
        if not isinstance(block, ContextBlock):
            msg = f"source {name!r} returned a {type(block).__name__}; return ContextBlock objects"
            raise SourceError(msg)
        if block.placement not in ("transient", "references"):
            # 000: dynamic blocks can never become System (nor anything but runtime or reference).
            msg = (
                f"source {name!r} returned block {block.id!r} with placement "
                f"{block.placement!r}; a source's blocks are 'transient' (ContextBlock.runtime) "
                "or 'references' (ContextBlock.reference), never System"
            )
            raise SourceError(msg)
        if not isinstance(block.text, str):
            msg = f"source {name!r} returned block {block.id!r} whose text is not a str"
            raise SourceError(msg)
        if not isinstance(block.id, str) or not block.id.strip():
            msg = f"source {name!r} returned a block with an empty id; give every block an id"
            raise SourceError(msg)
        if block.id in seen:
            msg = f"source {name!r} returned the block id {block.id!r} twice; ids must be unique"
            raise SourceError(msg)
        seen.add(block.id)
        if registration.priority is not None:
            block = replace(block, priority=registration.priority)
        if registration.required is not None:
            block = replace(block, is_required=registration.required)
        if block.is_required and registration.on_failure == "omit":
            msg = f"source {name!r} is 'omit' and returned required block {block.id!r}"
            raise SourceError(msg)
        blocks.append(block)
    return blocks


async def load_sources(
    registrations: Sequence[SourceRegistration], request: ContextRequest
) -> tuple[list[Material], list[tuple[str, str]]]:
    """Load every enabled source once, in order: (materials, omitted failures).

    Raises `SourceUnavailable` for a failing ``fail`` source and `SourceError` for structural
    errors (whatever the policy).
    """
    materials: list[Material] = []
    failures: list[tuple[str, str]] = []
    for registration in registrations:
        if not registration.enabled:
            continue
        registration.loads += 1
        try:
            result = await asyncio.wait_for(registration._call(request), registration.timeout)
            if result is None:
                msg = "returned no result (None); return [] for no material"
                raise LookupError(msg)
        except Exception as exc:
            reason = (
                f"timed out after {registration.timeout:g} s"
                if isinstance(exc, TimeoutError)
                else f"{type(exc).__name__}: {exc}"
            )
            if registration.on_failure == "omit":
                failures.append((f"source/{registration.name}/", reason))
                continue
            msg = (
                f"source {registration.name!r} failed: {reason}. Fix the source, raise its "
                "timeout, or register it with on_failure='omit'"
            )
            raise SourceUnavailable(msg) from exc
        for block in _check_blocks(registration, result):
            materials.append(
                Material(
                    item_id=f"source/{registration.name}/{block.id}",
                    source_id=f"source/{registration.name}",
                    category="source",
                    block=block,
                    tag="RUNTIME_STATE" if block.placement == "transient" else "HARNESS_CONTEXT",
                )
            )
    return materials, failures
