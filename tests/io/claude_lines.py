"""Claude Code session lines written by the importers' tests: one exchange (a prompt and its
reply) as the two lines Claude Code writes for it."""

from __future__ import annotations

from typing import Any


def exchange(n: int, message: dict[str, Any], **line: Any) -> list[dict[str, Any]]:
    """The lines of exchange ``n``: the prompt ``q<n>``, then the reply ``a<n>`` of request
    ``r<n>`` (an assistant message with ``message``'s fields, on a line with ``line``'s)."""
    reply = {"role": "assistant", **message, "content": [{"type": "text", "text": f"a{n}"}]}
    return [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": f"q{n}"}},
        {"type": "assistant", "sessionId": "s", "requestId": f"r{n}", **line, "message": reply},
    ]
