"""SpecStory Markdown: the chats SpecStory saves in ``.specstory/history/*.md`` (Cursor's and
other agents') — `ctxlab.io.formats.specstory.parse` says what is read and where it was learned."""

from __future__ import annotations

from pathlib import Path

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.specstory.parse import from_specstory, is_specstory
from ctxlab.util._jsonl import read_text


def _read_text(path: Path, head: str, episode: int | None, name: str | None) -> Transcript:
    builder, notes = from_specstory(read_text(path), str(path))
    meta = {"source": "specstory", **notes}
    return built_transcript(name or path.stem, builder, meta, "", ())


def _chat_markdown(path: Path) -> bool:
    # Of Markdown files, only SpecStory's chats: not every README.
    try:
        with path.open("rb") as handle:
            return is_specstory(handle.read(2048).decode("utf-8", "replace"))
    except OSError:
        return False


FORMAT = SessionFormat(
    name="specstory",
    tool="SpecStory Markdown histories (Cursor, Claude Code, Codex, Gemini CLI through the "
    "SpecStory CLI), 2025–2026",
    learned_from="specstoryai/getspecstory specstory-cli/pkg/session/markdown.go and the "
    "repository's .specstory/history files",
    priority=300,
    never="other Markdown (a README, aider's history): SpecStory's own header or comment",
    text=is_specstory,
    read_text=_read_text,
    census="Markdown sections (turns, tool uses)",
    suffixes=(".md",),
    listed=_chat_markdown,
)
