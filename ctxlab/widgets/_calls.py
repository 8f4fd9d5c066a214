"""What a Lab over a live agent does when asked: send a message, compact now, stop.

Each call runs as a task on the kernel's event loop (the panels follow the agent's events), its
outcome lands in the status line, and a failure is kept in ``lab.last_error``. A Lab over a
read-only source (a recording, another framework's agent) refuses them with the reason.
"""

from __future__ import annotations

import asyncio
import html
from typing import TYPE_CHECKING, Any, cast

from ctxlab.agent import Agent
from ctxlab.exceptions import CallStopped, UsageError
from ctxlab.messages import AssistantMessage
from ctxlab.pipeline import CompactionRecord

if TYPE_CHECKING:
    from ctxlab.widgets._lab import Lab

__all__ = ["LiveCalls"]


class LiveCalls:
    """Send, Compact and Stop of ``lab`` (the Lab's methods of those names call these)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def agent(self) -> Agent:
        """The live agent, or a `UsageError` naming why this Lab has none."""
        if self.lab.agent.capabilities.read_only:
            msg = "this Lab shows a recording: it is read-only (apply a config to replay it)"
            raise UsageError(msg)
        return cast(Agent, self.lab.agent)

    def start(self, message: str) -> asyncio.Task[Any] | None:
        """Start a call in the background; its task, or None (with the reason shown)."""
        lab = self.lab
        if lab.agent.capabilities.read_only:
            # A recording or another framework's agent: nothing is sent, the buttons stay off.
            lab.controls.status.value = (
                "<span style='color:#c00'>"
                + html.escape(f"nothing to send: {lab.agent.capabilities.note}")
                + "</span>"
            )
            return None
        if not message.strip():
            lab.controls.status.value = "<span style='color:#c00'>Type a message first.</span>"
            return None
        if lab.task is not None and not lab.task.done():
            lab.controls.status.value = (
                "<span style='color:#c00'>A call is running; wait or Stop.</span>"
            )
            return None
        lab.controls.busy(True)  # at once: the click must not be repeatable before the task runs
        lab.task = asyncio.ensure_future(lab.send(message, raise_errors=False))
        return lab.task

    async def send(self, message: str, *, raise_errors: bool) -> AssistantMessage | None:
        """One call of the agent: the reply, or None after a Stop or (unraised) failure."""
        lab, controls = self.lab, self.lab.controls
        lab.sources.refresh()
        controls.busy(True)
        lab.last_error = None
        try:
            reply = await self.agent()(message)
        except CallStopped:
            controls.status.value = (
                f"<span>stopped after {len(lab.log)} requests · the conversation is kept; "
                "Send continues it</span>"
            )
            return None
        except Exception as exc:
            lab.last_error = exc
            controls.error(exc)
            if raise_errors:
                raise
            return None
        finally:
            controls.stop_button.disabled = True
            controls.send_button.disabled = False
        self.recalibrate()
        lab._static.refresh(force=True)
        text = "".join(getattr(b, "text", "") for b in reply.content)
        controls.status.value = f"<span>done · {len(lab.log)} requests</span>"
        controls.status.value += f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"
        return reply

    async def compact(self, hint: str) -> CompactionRecord | None:
        """Compact the working context now whatever its size; the record, or None."""
        lab = self.lab
        try:
            record = await self.agent().compress_context(instructions=hint or None, force=True)
        except Exception as exc:
            lab.last_error = exc
            lab.controls.error(exc)
            return None
        lab._static.refresh(force=True)
        if record is None:
            size = len(self.agent().context.conversation)
            lab.controls.status.value = html.escape(
                f"nothing to compact: the {size} messages in context all fit the kept tail "
                "(compaction keeps the latest turns whole)"
            )
        else:
            lab.controls.status.value = (
                f"<span>compacted {record.messages_compacted} messages: "
                f"{record.tokens_before} → {record.tokens_after} tokens</span>"
            )
        return record

    def recalibrate(self) -> None:
        """Refit the live agent's estimates against its provider's usage (after each call)."""
        lab = self.lab
        if lab.agent.capabilities.replays or not any(r["usage_total_input"] for r in lab.log.rows):
            return
        lab._calibration = lab.log.fit_calibration()
        lab.log.calibrate(lab._calibration)
        lab.budget.update_usage(lab.log)  # the calibrated line with the billed one
        lab._update_header()

    def stop(self) -> None:
        """Stop the running call at its next step boundary."""
        if not self.lab.agent.capabilities.read_only:
            cast(Agent, self.lab.agent).stop()
        self.lab.controls.status.value = "<span>stopping at the next step…</span>"
