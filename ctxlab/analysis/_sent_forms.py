"""What a ctxlab recording's requests sent of each tool result, where that differs from what its
messages keep.

ctxlab's own recording keeps each result whole in its messages and, beside them
(`ctxlab.agent.SENT_RESULTS` in the transcript's meta), the form its requests sent: cut to the
tool-result limit, or offloaded to a file with a preview. The recording *as recorded* and a fork
replaying it compare with what was sent, not with the whole result.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.agent._export import SENT_RESULTS
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage

__all__ = ["as_sent", "sent_forms"]

Message = UserMessage | AssistantMessage


def sent_forms(transcript: Transcript) -> dict[str, ToolResultBlock]:
    """The tool results a ctxlab recording's requests sent otherwise than its messages keep
    them (cut, offloaded: `ctxlab.agent.SENT_RESULTS`), by call id; none for another tool's
    recording. An entry that does not read as a result is a `UsageError` naming it."""
    saved = transcript.meta.get(SENT_RESULTS) if transcript.meta.get("source") == "ctxlab" else None
    if not isinstance(saved, dict):
        return {}
    forms: dict[str, ToolResultBlock] = {}
    for key, value in saved.items():
        try:
            block = ToolResultBlock.model_validate(value)
        except ValueError as exc:
            msg = (
                f"the recording's {SENT_RESULTS!r} entry {key!r:.60} is not a tool result "
                f"({exc.__class__.__name__}); save the transcript again with Agent.transcript()"
            )
            raise UsageError(msg) from exc
        forms[str(key)] = block
    return forms


def as_sent(messages: Sequence[Message], forms: dict[str, ToolResultBlock]) -> tuple[Message, ...]:
    """``messages`` with each tool result in ``forms`` replaced by the form that was sent."""
    if not forms:
        return tuple(messages)
    return tuple(
        m.model_copy(update={"content": tuple(_sent(b, forms) for b in m.content)})
        if isinstance(m, UserMessage) and any(r.tool_use_id in forms for r in m.tool_results)
        else m
        for m in messages
    )


def _sent(block: object, forms: dict[str, ToolResultBlock]) -> object:
    if isinstance(block, ToolResultBlock):
        return forms.get(block.tool_use_id, block)
    return block
