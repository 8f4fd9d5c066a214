"""Gemini API contents: a list of ``{role, parts}`` (`ctxlab.io.formats._gemini`)."""

from __future__ import annotations

from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._gemini import from_gemini_contents, is_gemini_contents


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list):
        msg = f"{where}: Gemini contents are a list of {{role, parts}} objects"
        raise MessageFormatError(msg)
    return built_transcript(name, from_gemini_contents(data, where), meta, "", ())


FORMAT = SessionFormat(
    name="gemini",
    tool="Gemini API contents (google-genai Content dicts)",
    learned_from="the Gemini API's Content and Part types",
    priority=210,
    never="pydantic-ai messages (asked before it): role user/model with parts, a model turn",
    records=is_gemini_contents,
    read=_read,
    census="contents",
    messages=True,
)
