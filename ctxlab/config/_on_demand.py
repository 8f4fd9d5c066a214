"""`OnDemandCompaction`: the application, not a threshold, decides when the conversation is
summarized — the policy of Anthropic's compaction on demand (Messages API beta: the top-level
``compaction={"type": "summarize"}`` parameter, read from anthropic 2.17.0,
``types/beta/beta_compaction_config_param.py`` and ``message_create_params.py``: "the request is
a compaction request: the conversation in ``messages`` is summarized and the response holds
only the resulting ``compaction`` block, which later requests send first in ``messages`` in
place of the messages it summarizes").

The rules are what an application knows before it sends a request: whether the user has just
given a new task, how many requests went by since the last compaction, how large the last
request was (its usage), and how long the session was idle. Any rule that holds asks.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["OnDemandCompaction"]


class OnDemandCompaction(BaseModel):
    """Compaction on demand: before a request, the application asks for a summary when one of
    its rules holds, and sends the returned summary in place of what it summarizes.
    Threshold compaction stays in force beside it as a backstop unless
    ``compaction.enabled`` is False. Replays apply it on the recording's clock and sizes; a
    live agent asks before each reasoning request, on the wall clock.

    What the next requests carry is the documented shape: the summary, then what arrived since
    the last request — not the reserve's tail, and no task pinned beside the summary (ctxlab's
    own compactions pin the user's first message; the documented block stands alone, and at a
    new task the pin would be the old task). The summary's ``task_overview`` states it."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True
    )

    at_task: bool = False
    """Ask when a new task begins: the request follows a user message that answers no tool
    call (the user spoke), never at the session's first request."""
    every_requests: int | None = Field(default=None, gt=0)
    """Ask at every this many requests since the last compaction (ctxlab's or on demand)."""
    at_tokens: int | None = Field(default=None, gt=0)
    """Ask when the last request's input reached this many tokens (what the application
    reads in the last response's usage, not the request it is about to send)."""
    idle_seconds: float | None = Field(default=None, gt=0)
    """Ask after a pause longer than this (the recording's clock in a replay)."""
    min_tokens: int = Field(default=0, ge=0)
    """Never ask when the last request held fewer input tokens than this (too little to be
    worth a summary call). 0: no floor."""
    instructions: str | None = None
    """Guidance added to these compactions' summary requests, as a "Compact now" hint is
    (the exported loop sends it as the API's ``instructions``, which replace the server's
    prompt); None: ``compression_prompt`` alone."""

    @model_validator(mode="after")
    def _some_rule(self) -> OnDemandCompaction:
        rules = (self.at_task, self.every_requests, self.at_tokens, self.idle_seconds)
        if not any(r not in (None, False) for r in rules):
            msg = (
                "on_demand needs a rule to ask by: at_task=True, every_requests, at_tokens or "
                "idle_seconds — without one it never compacts"
            )
            raise PydanticCustomError("config_rule", msg)
        if self.instructions is not None and not self.instructions.strip():
            msg = "on_demand.instructions is empty: give the instruction, or None for the default"
            raise PydanticCustomError("config_rule", msg)
        return self
