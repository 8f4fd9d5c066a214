"""`Unrecorded`: what one request carried that no one can read — a recorded harness's own System
prompt, tool schemas and reminders, which its recording does not hold — known only by its size.

It is material with no text: the pipeline counts it against the window and the trigger like the
System prompt it stands for, lays it first (the provider reads it as the cached prefix), and the
manifest shows it as an ``unrecorded`` item saying how its size is known. Nothing of it is sent
(ctxlab has nothing to send); `ctxlab.analysis.UnrecordedPart` sizes it for each request of a
recording, from the bill or as stated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.exceptions import UsageError

__all__ = ["Unrecorded"]


@dataclass(frozen=True, slots=True)
class Unrecorded:
    """What one request carried that its recording does not hold."""

    tokens: int
    """Its size, in the provider's tokens (what the bill counts)."""
    parts: str = "System prompt, tool schemas"
    """What it stands for, in words."""
    how: str = "stated"
    """How its size is known (``inferred from the bill: …``, ``stated``, a profile's source)."""
    key: str = ""
    """What identifies the prefix it stands for: requests with the same key send the same
    unrecorded prefix (the cost model reads it from the cache)."""

    def __post_init__(self) -> None:
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 0:
            msg = f"unrecorded tokens must be a whole number from 0, got {self.tokens!r}"
            raise UsageError(msg)

    @property
    def item_id(self) -> str:
        """Its manifest id."""
        return "unrecorded/" + (self.key or "prefix")
