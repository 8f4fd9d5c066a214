"""`RecordedModel`: a recording answering a fork of itself, offline and honestly.

At each reasoning request of a branch it returns the reply the recorded agent gave to the
recorded request of the same number — and the branch's tools return the recorded results of
those replies' calls (`recorded_tools`), so nothing runs on the user's machine — **as long as
the branch's request holds what the recorded request held** (`holds`):

    its conversation — every message's role and, in order, its text blocks, tool calls (name
    and input) and tool results (text and error flag) — equals the recorded request's, with
    tool-call ids and the run's own folders taken out as `ctxlab.fork.signature` takes them
    out. Not compared: what a recording does not hold (the System prompt and the tool
    schemas: a Claude Code file has neither), thinking (the provider may redact it), and the
    notes ctxlab's pipeline adds for the model (hint blocks: a usage notice, an image-limit
    notice).

At the first request that differs (or one past the recording's last) the contexts part: the
recording cannot know what its agent would have answered. Without ``then`` the model ends the
run there (`parted_at` is that request's number; `ctxlab.fork.run_forward` leaves the run's
outcome unknown with the note ``unknown after request d — the contexts part here``;
``the recording ends here`` when the branch asks more than it holds); with
``then=<a model>`` that model answers from there on, and the branch's own tools run the calls.

A recorded user turn may hold more than its calls' results: Claude Code writes a system
reminder, an interruption note, a task notification or the user's typed words in the same turn.
While the contexts have not parted, the branch's turn after a replayed reply's calls is the
recorded turn — its other blocks in their places, each result the branch's own
(`results_turn`, which the agent asks: `ctxlab.agent.ResultsTurn`); else the branch's request
would lack that text and part there though its config changed nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._recorded import recorded_requests
from ctxlab.analysis._sent_forms import sent_forms
from ctxlab.exceptions import UsageError
from ctxlab.fork._signature import signature
from ctxlab.io._source import transcript_of
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    UserBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.models._base import (
    Model,
    ModelResponse,
    Purpose,
    TextCallback,
    checked_call,
    emit_text,
    stop_reason_of,
)
from ctxlab.pipeline import SummaryRequest, extractive_summarizer

if TYPE_CHECKING:
    from ctxlab.analysis._recorded import RecordedRequest

__all__ = ["ENDED", "PARTED", "WHOLE", "RecordedModel", "holds", "parted_note", "sent_forms"]

PARTED = "unknown after request {d} — the contexts part here"
"""The note of a run whose contexts part from the recording's at request ``d``."""

ENDED = "unknown after request {d} — the recording ends here"
"""The note of a run that asks more than the recording holds (it ended on a tool call)."""

WHOLE = "unknown: replayed the recording to its end (request {d}) — no call ran here"
"""The note of a run that replayed the whole recording: its every reply and result was the
recording's, nothing ran in its workspace, so no check can judge it (the recording's own
outcome is the recording's to tell)."""

_UNCOMPARED = (HintBlock, ThinkingBlock, RedactedThinkingBlock)


def parted_note(request: int, *, ended: bool = False) -> str:
    """The note of a run that parts from its recording at ``request`` (``ended``: the
    recording holds no request there)."""
    return (ENDED if ended else PARTED).format(d=request)


def _held(messages: Sequence[Any]) -> ModelRequest:
    # Only the conversation is compared: the System prompt and the tools are left empty.
    kept = []
    for message in messages:
        blocks = tuple(b for b in message.content if not isinstance(b, _UNCOMPARED))
        kept.append(message.model_copy(update={"content": blocks}))
    return ModelRequest(system="", messages=tuple(kept), tools=())


def holds(request: ModelRequest, recorded: Sequence[Any], folders: Sequence[str] = ()) -> bool:
    """Whether ``request`` holds what the recorded request's ``recorded`` messages held (see
    the module): their conversations' signatures are equal."""
    return signature(_held(request.messages), folders) == signature(_held(recorded), folders)


class RecordedModel(Model):
    """The recorded agent's replies, while a branch's requests hold what the recording's did.

    Args:
        recording: The recording (a `Transcript`, a file `ctxlab.load` reads, or a row of
            `ctxlab.sessions`).
        then: The model that answers from the first request that differs on (None: the run
            ends there, its outcome unknown).
        start: The recorded request the first request answered is (`ctxlab.fork.fork` sets
            it to the fork's step).
        folders: Folders taken out of the texts compared (a run's workspace; `fork` sets them).
    """

    def __init__(
        self,
        recording: Any,
        *,
        then: Model | None = None,
        start: int = 0,
        folders: Sequence[str] = (),
        context_window: int = 200_000,
    ) -> None:
        if then is not None and not isinstance(then, Model):
            msg = (
                f"then must be a ctxlab Model (it answers once the contexts part), got {then!r:.80}"
            )
            raise UsageError(msg)
        self.transcript: Transcript = transcript_of(recording, taker="RecordedModel")
        self.recorded: list[RecordedRequest] = list(recorded_requests(self.transcript))
        if (
            isinstance(start, bool)
            or not isinstance(start, int)
            or not 0 <= start <= len(self.recorded)
        ):
            msg = f"start must be a request of the recording, 0 to {len(self.recorded)}, got {start!r:.80}"
            raise UsageError(msg)
        self.then = then
        self.start = start
        self.folders = tuple(folders)
        self.name = "recorded"
        self.context_window = then.context_window if then is not None else context_window
        self.answered = 0
        """Requests answered from the recording."""
        self._by_calls: dict[frozenset[str], UserMessage] | None = None
        sent_forms(self.transcript)  # a damaged entry is refused here, before any request
        self.parted_at: int | None = None
        """The recorded request number where the contexts parted (None: they have not)."""

    def starting_at(self, start: int, folders: Sequence[str] = ()) -> RecordedModel:
        """A fresh model of the same recording whose first request is recorded request
        ``start`` (``folders`` taken out of the texts compared)."""
        made = RecordedModel.__new__(RecordedModel)
        made.__dict__.update(self.__dict__)
        made.start, made.answered, made.parted_at = start, 0, None
        made.folders = tuple(folders) or self.folders
        made.then = self.then.branch() if self.then is not None else None
        return made

    def branch(self) -> RecordedModel:
        """A fresh model for each run: its count and its handover are its own."""
        return self.starting_at(self.start, self.folders)

    @property
    def counter(self) -> Any:
        return self.then.counter if self.then is not None else super().counter

    def results_turn(self, results: tuple[ToolResultBlock, ...]) -> UserMessage | None:
        """The recorded turn that answered the calls ``results`` answer, each result the
        branch's own, when it holds more than results and the contexts have not parted (None:
        the results alone)."""
        if self.parted_at is not None or not results:
            return None
        turn = self._turns().get(frozenset(r.tool_use_id for r in results))
        if turn is None or len(turn.tool_results) == len(turn.content):
            return None
        mine = {r.tool_use_id: r for r in results}
        blocks: list[UserBlock] = [
            mine[b.tool_use_id] if isinstance(b, ToolResultBlock) else b for b in turn.content
        ]
        return UserMessage(content=tuple(blocks))

    def _turns(self) -> dict[frozenset[str], UserMessage]:
        """The recording's user turns that answer calls, by the ids of the calls answered."""
        if self._by_calls is None:
            self._by_calls = {
                frozenset(r.tool_use_id for r in m.tool_results): m
                for m in self.transcript.messages
                if isinstance(m, UserMessage) and m.tool_results
            }
        return self._by_calls

    def recorded_results(self) -> dict[str, ToolResultBlock]:
        """Every tool result the recording holds, by its call's id."""
        return {
            block.tool_use_id: block
            for message in self.transcript.messages
            for block in message.content
            if isinstance(block, ToolResultBlock)
        }

    @property
    def note(self) -> str | None:
        """Where the replay stopped answering, as a run's note (None: it has not)."""
        if self.parted_at is None:
            return None
        return parted_note(self.parted_at, ended=self.parted_at >= len(self.recorded))

    def next_message(self) -> UserMessage | None:
        """The message the recorded user sent after the last reply answered, when the
        recording goes on from there (None once the contexts part, or at its end)."""
        number = self.start + self.answered
        if self.parted_at is not None or self.answered == 0 or number >= len(self.recorded):
            return None
        after = self.recorded[number - 1].reply + 1
        message = self.transcript.messages[after] if after < len(self.transcript.messages) else None
        if not isinstance(message, UserMessage) or message.tool_results:
            return None
        return message

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        if self.parted_at is None:
            number = self.start + self.answered
            recorded = self.recorded[number] if number < len(self.recorded) else None
            if recorded is not None and holds(request, recorded.messages, self.folders):
                self.answered += 1
                return self._recorded_reply(recorded, on_text)
            self.parted_at = number
            if self.then is None:
                message = AssistantMessage(content=f"[{self.note}]")
                stop = stop_reason_of(message)
                return ModelResponse(message=message, stop_reason=stop, model=self.name)
        if self.then is None:
            msg = f"the replay ended at request {self.parted_at}: the run has nothing to answer"
            raise UsageError(msg)
        return await self.then.request(request, purpose=purpose, on_text=on_text)

    def _recorded_reply(
        self, recorded: RecordedRequest, on_text: TextCallback | None
    ) -> ModelResponse:
        reply = self.transcript.messages[recorded.reply]
        assert isinstance(reply, AssistantMessage)
        stop = stop_reason_of(reply)
        response = ModelResponse(
            message=reply, stop_reason=stop, usage=recorded.usage, model=recorded.model or ""
        )
        emit_text(response.message, on_text)
        return response

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        # The recording holds no summary of the branch's own compaction: the model it hands
        # over to writes it (the request after it parts), else ctxlab's offline extract.
        if self.then is not None:
            return await self.then.summarize(summary, context=context)
        return await extractive_summarizer(summary)
