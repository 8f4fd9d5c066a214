"""Gemini CLI chats (JSON Lines, and the older one JSON document): every line and every
message of a document is a record; the calls and outputs are those of the replies in force (a
later record of the same id replaces, a rewind drops from the record it names)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import PRESENT, Count, Field, Find, InForce, Length, Total

IN_FORCE = InForce(key="id", rewind="$rewindTo", expand="messages")
REPLIES = {"type": "gemini"}
CONTRACT = each(
    [
        FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl",
        FIXTURES / "gemini" / "session-legacy.json",
    ],
    records=Total(Count(Find()), Count(Find("messages.*", of={"sessionId": PRESENT}))),
    calls=Length(Find(of=REPLIES, log=IN_FORCE), "toolCalls"),
    outputs=Field(Find(of={**REPLIES, "tokens": PRESENT}, log=IN_FORCE), "tokens.output"),
)
