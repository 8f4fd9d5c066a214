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
    """What to say of a text file (not JSON) by its first characters: aider's LLM history.
    (SpecStory's Markdown export is read by its own importer.)"""
    start = head.lstrip()
    if start.startswith(("TO LLM ", "LLM RESPONSE ")):
        return (
            "this is aider's LLM history (.aider.llm.history); ctxlab reads aider's chat "
            "history: load .aider.chat.history.md from the same folder"
        )
    return None
