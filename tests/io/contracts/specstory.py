"""SpecStory Markdown histories: a record a section — each header outside code blocks and
``<tool-use>`` elements (whose bodies hold code opened mid-line), and the preamble when text
stands before the first header. SpecStory closes a fetched rule's block with the marks glued
to its last line."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Sections

HEADER = r"^_\*\*(User|Assistant|Agent)\b.*\*\*_\s*$|^_\*\*\*\*_\s*$"
FILES = [p for p in sorted((FIXTURES / "specstory").glob("*.md")) if p.name != "README.md"]
CONTRACT = each(
    FILES, records=Sections(HEADER, fences=("```", "~~~"), skip=("<tool-use", "</tool-use>"))
)
