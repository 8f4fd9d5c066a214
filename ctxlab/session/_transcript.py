"""`log_transcript`: a logged session as a `Transcript`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ctxlab.io._transcript import Transcript, usage_by_reply
from ctxlab.messages import ProviderUsage, parse_messages
from ctxlab.session._records import SessionKey

if TYPE_CHECKING:
    from ctxlab.session._log import SessionLog

__all__ = ["log_transcript"]


def log_transcript(log: SessionLog, key: SessionKey) -> Transcript:
    """The session as a `Transcript`: every message (uncompacted), and the provider usage
    of each step on the assistant message it produced. The log keeps no System prompt and
    no tool schemas: those come from the agent (``agent.transcript()`` has them)."""
    log._require(key)
    messages = parse_messages(json.loads(p) for p in log.message_payloads(key))
    usages = [
        ProviderUsage(**payload["usage"])
        for _, payload in log.event_payloads(key, ("model_response",))
        if isinstance(payload.get("usage"), dict)
    ]
    return Transcript(
        name=key.session_id,
        meta={"source": "ctxlab", "agent_id": key.agent_id, "session_id": key.session_id},
        system="",
        messages=tuple(messages),
        usage=usage_by_reply(messages, usages),
    )
