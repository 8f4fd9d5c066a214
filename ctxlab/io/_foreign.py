"""Sessions of tools whose format `ctxlab.load` recognises but does not read (yet): each is said
by name, with what to do, rather than taken for another format or failing on a detail."""

from __future__ import annotations

from typing import Any

__all__ = ["foreign_document", "foreign_text"]


def foreign_document(value: Any) -> str | None:
    """What to say of a decoded document (or first JSON Lines record) of a format ctxlab
    recognises but does not read; None for any other. (Gemini CLI's ``stream-json`` and Letta's
    agent files, once named here, are read by their own importers.)"""
    return None


def foreign_text(head: str) -> str | None:
    """What to say of a text file (not JSON) by its first characters; None for any other. (aider's
    LLM log, once named here, is read by its own importer, as SpecStory's Markdown export.)"""
    return None
