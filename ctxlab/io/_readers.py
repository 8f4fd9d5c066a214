"""Reading decoded data as a format (its declaration's reader: `ctxlab.io.formats`), a library's
objects as the plain data its format reads (each format's ``plain``), and the `Transcript` every
reader ends in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._census import Census
from ctxlab.io._compactions import place_compactions
from ctxlab.io._registry import format_named, formats
from ctxlab.io._transcript import Transcript
from ctxlab.messages._request import ToolSchema

__all__ = ["built_transcript", "from_data", "plain_data"]


def built_transcript(
    name: str,
    builder: ConversationBuilder,
    meta: dict[str, Any],
    system: str,
    tools: tuple[ToolSchema, ...],
) -> Transcript:
    """The transcript of a finished builder: its messages, notes, usage and times, the
    recorded compactions placed (`MessageFormatError` when it holds no message)."""
    messages, notes, usage, times = builder.finish()
    if not messages:
        census = Census.from_meta(notes.get("census"))
        said = f" ({census})" if census is not None and census.read else ""
        msg = f"{builder.where}: no messages{said}"
        raise MessageFormatError(msg)
    place_compactions(meta, messages)
    return Transcript(
        name=name,
        meta={**meta, **notes},
        system=system,
        messages=tuple(messages),
        tools=tools,
        usage=usage,
        times=times,
    )


def from_data(data: Any, kind: str, where: str, name: str, episode: int) -> Transcript:
    """The transcript of decoded ``data`` read as ``kind`` (a registered format's reader)."""
    meta: dict[str, Any] = {"source": kind}
    declared = format_named(kind)
    if declared is None or declared.read is None:
        msg = f"{where}: format {kind!r} needs a file path"
        raise MessageFormatError(msg)
    return declared.read(data, where, name, episode, meta)


def plain_data(items: Sequence[Any]) -> Sequence[Any]:
    """A list of a library's objects (not JSON) as the plain data its format reads: the first
    registered format whose ``plain`` takes them, else each object's ``model_dump`` (pydantic
    models), else the items as they are."""
    if not items or isinstance(items[0], Mapping):
        return items
    for declared in formats():
        if declared.plain is not None:
            found = declared.plain(items)
            if found is not None:
                return found
    if hasattr(items[0], "model_dump"):
        return [item.model_dump(mode="json") for item in items]
    return items
